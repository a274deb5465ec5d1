import { Ajv, type ErrorObject } from 'ajv';

// The gateway's control port takes JSON messages told apart by their `type` (the carrier's
// commands, lib/media/media-command-schema.ts; the SIP side's callbacks,
// lib/media/sip-callback-schema.ts). Each kind is a JSON Schema checked with ajv, as the public
// API's bodies are (api/http/validation.ts): a message acted on is one of them, whole, and nothing
// else; anything else is refused with what was wrong, never cast.

/** One kind of message: its `type`, its fields (`optional` may be left out), nothing more. */
export function messageOfType(
  type: string,
  properties: Record<string, object> = {},
  optional: string[] = [],
) {
  return {
    type: 'object',
    properties: { type: { const: type }, ...properties },
    required: ['type', ...Object.keys(properties).filter((name) => !optional.includes(name))],
    additionalProperties: false,
  };
}

type MessageSchema = ReturnType<typeof messageOfType>;

/** One schema for all the kinds: the `type` picks the kind, so a refusal names that kind's field. */
export function typedMessagesSchema(kinds: MessageSchema[]) {
  return {
    type: 'object',
    required: ['type'],
    properties: { type: { enum: kinds.map((schema) => schema.properties.type.const) } },
    allOf: kinds.map((schema) => ({
      if: { properties: { type: { const: schema.properties.type.const } } },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then
      then: schema,
    })),
  };
}

const ajv = new Ajv({ allErrors: false, strict: false });

/** A reader of messages of `kinds`: the message as its type, or why it is none (`field: what`). */
export function typedMessageReader<T>(
  kinds: MessageSchema[],
): (body: unknown) => { message: T } | { error: string } {
  const validate = ajv.compile<T>(typedMessagesSchema(kinds));
  return (body) => (validate(body) ? { message: body } : { error: describe(validate.errors?.[0]) });
}

/** A reader of one JSON Schema's documents: the document as `T`, or why it is none (`field: what`). */
export function schemaReader<T>(schema: object): (body: unknown) => { message: T } | { error: string } {
  const validate = ajv.compile<T>(schema);
  return (body) => (validate(body) ? { message: body } : { error: describe(validate.errors?.[0]) });
}

function describe(error: ErrorObject | undefined): string {
  if (!error) return 'not a message of this API';
  const field = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const extra =
    error.keyword === 'additionalProperties'
      ? ` (${(error.params as { additionalProperty: string }).additionalProperty})`
      : '';
  return `${field || 'body'}: ${error.message ?? 'invalid'}${extra}`;
}
