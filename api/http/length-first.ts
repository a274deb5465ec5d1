import type { JsonSchema } from './route.js';
import { rewriteSchema } from './schema-rewrite.js';

// The input-cost rule (docs/api-platform.md): no string a client sends reaches a pattern or a
// format check before its length has passed. ajv runs with `allErrors: true` (so the refusal can
// rank unknown over missing over invalid), which on its own keeps checking `pattern` and `format`
// after `maxLength` already failed: a 1 MiB `language` went through the BCP 47 pattern, whose
// repeated-subtag look-aheads cost time quadratic in the length, and froze the event loop.
//
// The validator therefore compiles each string schema with its pattern and format behind an `if`
// on the same length bounds: `{maxLength, pattern}` → `{maxLength, if: {maxLength}, then:
// {pattern}}`. It accepts exactly the same strings; only the order of the checks changes. The
// OpenAPI document keeps the plain form. Every request string has a maxLength
// (test/api-input-cost.test.ts walks every route's schemas), so the costliest pattern runs on at
// most that many characters.

const GUARDED = ['pattern', 'format'] as const;
const BOUNDS = ['maxLength', 'minLength'] as const;

export function withLengthFirst(schema: JsonSchema): JsonSchema {
  return rewriteSchema(schema, guardByLength);
}

function guardByLength(node: JsonSchema): JsonSchema {
  const out = { ...node };
  if (!('maxLength' in out) || !GUARDED.some((k) => k in out)) return out;
  const bounds: JsonSchema = {};
  for (const key of BOUNDS) if (key in out) bounds[key] = out[key];
  const guarded: JsonSchema = {};
  for (const key of GUARDED) {
    if (!(key in out)) continue;
    guarded[key] = out[key];
    delete out[key];
  }
  // `if` and `then` of its own: a schema that already has them keeps its meaning under allOf.
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's `then` keyword, not a thenable.
  const check = { if: bounds, then: guarded };
  if ('if' in out) out.allOf = [...((out.allOf as unknown[]) ?? []), check];
  else Object.assign(out, check);
  return out;
}
