import type { JsonSchema } from './route.js';
import { rewriteSchema } from './schema-rewrite.js';

// PostgreSQL's text and jsonb cannot hold a NUL character, so no text the API stores or compares
// may contain one. Rather than each schema repeating it, every free-text string of a request's
// schemas (params, query, body: no pattern, format, enum or const of its own) and every object's
// property names get this pattern. The router validates with the result and the OpenAPI document
// shows the result, so a new field of a new route is covered, and documented, without a thought.

export const NO_NUL_PATTERN = '^[^\\u0000]*$';

export function withStorableText(schema: JsonSchema): JsonSchema {
  return rewriteSchema(schema, (node) => (isFreeText(node) ? { ...node, pattern: NO_NUL_PATTERN } : node));
}

function isFreeText(schema: JsonSchema): boolean {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  // propertyNames' schema is about strings even when it names no type.
  const isString = types.includes('string') || (schema.type === undefined && 'maxLength' in schema);
  return isString && !('pattern' in schema || 'format' in schema || 'enum' in schema || 'const' in schema);
}
