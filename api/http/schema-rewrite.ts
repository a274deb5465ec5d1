import type { JsonSchema } from './route.js';

/** Keywords whose values are data, not schemas: a rewrite leaves them as they are. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example']);

/**
 * A copy of `schema` with `change` applied to every (sub)schema object, innermost first. The
 * router's and the document's schema rewrites (storable-text.ts, length-first.ts) walk with it.
 */
export function rewriteSchema(schema: JsonSchema, change: (node: JsonSchema) => JsonSchema): JsonSchema {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(node as JsonSchema)) {
      out[key] = DATA_KEYWORDS.has(key) ? value : walk(value);
    }
    return change(out);
  };
  return walk(schema) as JsonSchema;
}
