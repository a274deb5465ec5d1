import type { ClientJoin } from './client-join.js';

// A transfer bridged in the gateway (telephony spec sections 1 and 8): the caller's stream and the
// stream of the person rung for them (the transfer's leg, dialled through the carrier with audio
// to this gateway) are joined once that person answered; the agent has left both. Each side's
// audio (μ-law frames, as they came) goes to the other as it comes, untouched. Either hang-up ends
// both; so does TRANSFER_MAX_MINUTES. Its length is told once (`ended`): it is counted in GET /usage
// as `transfer_seconds`, like the SIP side's own bridge.

/** One stream of the bridge, as the bridge sees it (a call's audio, media/call-audio.ts). */
export interface BridgeSide {
  /** Plays the other side's frame to this one. */
  play(payload: Uint8Array): void;
  /** Ends this side's stream (the other hung up, or the bridge's time is up). */
  hangUp(reason: string): void;
  /** Until what the agent said on this side has played (the bridge waits for it on both sides). */
  playedOut(): Promise<void>;
  /** The bridge is over: this side's audio is done (after its hang-up, when it had one). */
  over(): void;
  /** The client that can join this side to another itself (media/client-join.ts); null: none. */
  join: ClientJoin | null;
}

/** What one side tells the bridge: its person's audio, and their hang-up. */
export interface BridgeEnd {
  heard(payload: Uint8Array): void;
  gone(): void;
}

export interface TransferBridgeOptions {
  /** The longest the two stay joined (TRANSFER_MAX_MINUTES). */
  maxMs: number;
  /** The bridge is over: how long it lasted, and why. Called once. */
  ended(seconds: number, why: 'caller_hung_up' | 'target_hung_up' | 'time_limit'): void;
  now?: () => number;
}

export class TransferBridge {
  private over = false;
  private readonly startedAt: number;
  private readonly limit: NodeJS.Timeout;
  private resolveDone!: () => void;
  /** Resolves when the bridge is over (a draining gateway waits for it). */
  readonly done = new Promise<void>((resolve) => {
    this.resolveDone = resolve;
  });
  /** What the caller's side tells the bridge. */
  readonly callerEnd: BridgeEnd;
  /** What the target's side tells the bridge. */
  readonly targetEnd: BridgeEnd;

  constructor(
    private readonly caller: BridgeSide,
    private readonly target: BridgeSide,
    private readonly options: TransferBridgeOptions,
  ) {
    const now = options.now ?? Date.now;
    this.startedAt = now();
    this.callerEnd = {
      heard: (payload) => this.over || target.play(payload),
      gone: () => this.end('caller_hung_up'),
    };
    this.targetEnd = {
      heard: (payload) => this.over || caller.play(payload),
      gone: () => this.end('target_hung_up'),
    };
    this.limit = setTimeout(() => this.end('time_limit'), options.maxMs);
    this.limit.unref();
  }

  private end(why: 'caller_hung_up' | 'target_hung_up' | 'time_limit'): void {
    if (this.over) return;
    this.over = true;
    clearTimeout(this.limit);
    const reason = why === 'time_limit' ? 'the transfer reached its time limit' : 'the other side hung up';
    if (why !== 'caller_hung_up') this.caller.hangUp(reason);
    if (why !== 'target_hung_up') this.target.hangUp(reason);
    this.caller.over();
    this.target.over();
    const seconds = ((this.options.now ?? Date.now)() - this.startedAt) / 1000;
    this.options.ended(seconds, why);
    this.resolveDone();
  }
}
