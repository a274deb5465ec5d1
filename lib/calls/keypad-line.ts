// The telephone keypad in the transcript (telephony spec section 7): keys pressed are a line of
// their own, `[keypad] 1 2 3 4`, the agent's (`send_digits`) or the caller's.

const KEYPAD_PREFIX = '[keypad]';

/** Keys as a transcript line's text: `[keypad] 1 2 w 3`. */
export function keypadLineText(digits: string): string {
  return `${KEYPAD_PREFIX} ${[...digits].join(' ')}`;
}

export function isKeypadLine(text: string): boolean {
  return text.startsWith(KEYPAD_PREFIX);
}

/** What `send_digits` may press: keys, and `w` for a 0.5 s pause. */
export const SEND_DIGITS_PATTERN = '^[0-9*#w]{1,32}$';
