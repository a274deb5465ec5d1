// The UUID form the API accepts for ids: 8-4-4-4-12 hex digits, either case. Nothing else (no
// `urn:uuid:` prefix, no braces), so every accepted id is one PostgreSQL's uuid type can compare.

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}
