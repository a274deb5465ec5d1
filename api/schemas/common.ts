// Schema pieces shared by route modules.

// Every string a request can carry has a maxLength, checked before its format or pattern
// (api/http/length-first.ts, the input-cost rule in docs/api-platform.md).
export const UUID_MAX_LENGTH = 36;
/** RFC 3339 with a generous fraction: `2026-11-25T12:00:00.123456789+01:00` is 35. */
export const DATE_TIME_MAX_LENGTH = 64;
export const E164_MAX_LENGTH = 16;

export const uuidSchema = { type: 'string', format: 'uuid', maxLength: UUID_MAX_LENGTH } as const;
export const dateTimeSchema = {
  type: 'string',
  format: 'date-time',
  maxLength: DATE_TIME_MAX_LENGTH,
} as const;

/** Path params schema: each name a UUID (a non-UUID value is 400 parameter_invalid). */
export function uuidParams<const N extends readonly string[]>(...names: N) {
  return {
    type: 'object',
    required: names,
    properties: Object.fromEntries(names.map((name) => [name, uuidSchema])) as Record<
      N[number],
      typeof uuidSchema
    >,
  } as const;
}

/** `{ object, id, deleted: true }`, the answer of every DELETE. */
export const deletedSchema = {
  type: 'object',
  required: ['object', 'id', 'deleted'],
  additionalProperties: false,
  properties: { object: { type: 'string' }, id: uuidSchema, deleted: { const: true } },
} as const;
