// Schema pieces shared by route modules.

export const uuidSchema = { type: 'string', format: 'uuid' } as const;
export const dateTimeSchema = { type: 'string', format: 'date-time' } as const;

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
