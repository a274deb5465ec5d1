// Phone numbers in E.164 form, as the spec writes them: `+`, a non-zero digit, then 6 to 14 more
// digits. One rule for the API's schemas, the operator CLI and the voice runtime.

/** The JSON Schema `pattern` (the spec's own text). */
export const E164_PATTERN = '^\\+[1-9]\\d{6,14}$';

const E164 = new RegExp(E164_PATTERN);

export function isE164(value: unknown): value is string {
  return typeof value === 'string' && E164.test(value);
}
