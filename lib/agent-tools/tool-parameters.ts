import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { TOOL_PARAMETERS_MAX_BYTES } from './tool-rules.js';

// A tool's `parameters`: a JSON Schema (draft 2020-12) of `"type": "object"`, at most 16 KiB as
// JSON. Compiled by ajv as the model's arguments will be checked against it (strict mode off, so
// keywords ajv does not know, such as OpenAPI's, are allowed as annotations).

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** JSON nesting beyond this is refused first: JSON.stringify and ajv's compiler recurse per level. */
export const TOOL_PARAMETERS_MAX_DEPTH = 64;

// One instance for the process. `addUsedSchema: false` keeps a schema's `$id` from being
// registered (two agents may use the same one), and each compiled schema is removed again, so
// nothing of a tenant's schema stays in the cache.
const ajv = new Ajv2020({ strict: false, allErrors: true, addUsedSchema: false, logger: false });
addFormats(ajv);

export type CompiledParameters = { ok: true; validate: ValidateFunction } | { ok: false; problem: string };

/**
 * Compiles a tool's `parameters`, or says what is wrong with it (a sentence to follow the field's
 * name: "must be …"). Cost: linear in the size; depth and size are checked before compiling.
 */
export function compileToolParameters(parameters: unknown): CompiledParameters {
  if (!parameters || typeof parameters !== 'object' || Array.isArray(parameters)) {
    return { ok: false, problem: 'must be a JSON Schema object' };
  }
  // Depth first: JSON.stringify and ajv's compiler recurse per level.
  if (depthOf(parameters) > TOOL_PARAMETERS_MAX_DEPTH) {
    return { ok: false, problem: `must be nested at most ${TOOL_PARAMETERS_MAX_DEPTH} levels deep as JSON` };
  }
  const bytes = Buffer.byteLength(JSON.stringify(parameters));
  if (bytes > TOOL_PARAMETERS_MAX_BYTES) {
    return {
      ok: false,
      problem: `must be at most 16 KiB as JSON (${TOOL_PARAMETERS_MAX_BYTES} bytes; it is ${bytes})`,
    };
  }
  if ((parameters as Record<string, unknown>).type !== 'object') {
    return { ok: false, problem: 'must be an object schema: "type": "object" describing the arguments' };
  }
  try {
    return { ok: true, validate: ajv.compile(parameters) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, problem: `must be a valid JSON Schema (draft 2020-12): ${message.slice(0, 500)}` };
  } finally {
    ajv.removeSchema(parameters as object);
  }
}

/** What is wrong with a tool's `parameters`, or null. */
export function toolParametersProblem(parameters: unknown): string | null {
  const compiled = compileToolParameters(parameters);
  return compiled.ok ? null : compiled.problem;
}

/** The deepest nesting of arrays and objects, walked without recursion. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (!node || typeof node !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > TOOL_PARAMETERS_MAX_DEPTH) return deepest;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}
