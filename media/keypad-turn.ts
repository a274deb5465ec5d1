// The caller's keys as a turn (telephony spec section 7): the keys pressed one after the other
// are one caller line, `[keypad] 1 2 3 4`, ended by `#` or by KEYPAD_TURN_END_MS without another
// key. The `#` that ends the turn is not a key of it, unless it is the only one.

/** Silence after a key that ends the keypad turn. */
export const KEYPAD_TURN_END_MS = 2_000;

export interface KeypadTurnEnded {
  digits: string;
  /** On the call's clock: the first key, and the end of the turn. */
  startedAtMs: number;
  endedAtMs: number;
}

export class KeypadTurn {
  private digits = '';
  private startedAtMs = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: {
      /** Milliseconds on the call's clock. */
      clock: () => number;
      ended: (turn: KeypadTurnEnded) => void;
      endAfterMs?: number;
    },
  ) {}

  /** A key pressed; true when it is the first of a turn (the caller barges in with it). */
  press(digit: string): boolean {
    const first = this.digits === '' && this.timer === null;
    if (first) this.startedAtMs = this.deps.clock();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (digit === '#') {
      this.end(this.digits || '#');
      return first;
    }
    this.digits += digit;
    this.timer = setTimeout(() => this.end(this.digits), this.deps.endAfterMs ?? KEYPAD_TURN_END_MS);
    return first;
  }

  /** Nothing more is told (the call is ending). */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.digits = '';
  }

  private end(digits: string): void {
    this.stop();
    this.deps.ended({ digits, startedAtMs: this.startedAtMs, endedAtMs: this.deps.clock() });
  }
}
