import type { JsonSchema } from './route.js';

// PostgreSQL's text and jsonb cannot hold a NUL character, so no text the API stores or compares
// may contain one. Rather than each schema repeating it, every free-text string of a request's
// schemas (params, query, body: no pattern, format, enum or const of its own) and every object's
// property names get this pattern. The router validates with the result and the OpenAPI document
// shows the result, so a new field of a new route is covered, and documented, without a thought.

export const NO_NUL_PATTERN = '^[^\\u0000]*$';
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example']);

export function withStorableText(schema: JsonSchema): JsonSchema {
  return rewrite(schema) as JsonSchema;
}

function rewrite(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewrite);
  if (!node || typeof node !== 'object') return node;
  const schema = node as JsonSchema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    // Values of these keywords are data, not schemas.
    out[key] = DATA_KEYWORDS.has(key) ? value : rewrite(value);
  }
  if (isFreeText(schema)) out.pattern = NO_NUL_PATTERN;
  return out;
}

function isFreeText(schema: JsonSchema): boolean {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  // propertyNames' schema is about strings even when it names no type.
  const isString = types.includes('string') || (schema.type === undefined && 'maxLength' in schema);
  return isString && !('pattern' in schema || 'format' in schema || 'enum' in schema || 'const' in schema);
}
