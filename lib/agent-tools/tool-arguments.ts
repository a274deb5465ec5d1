import type { ValidateFunction } from 'ajv';
import { compileToolParameters } from './tool-parameters.js';

// The model's arguments checked against the tool's `parameters` (a JSON Schema, draft 2020-12)
// before anything is sent (agent-tools spec section 3), compiled as the API compiled it when the
// agent was saved (lib/agent-tools/tool-parameters.ts); a compiled schema is kept for the agent's
// later calls.

const compiled = new Map<string, ValidateFunction>();
/** Schemas kept compiled; beyond that the oldest goes (a worker serves many agents). */
const MAX_COMPILED = 500;

function validatorOf(parameters: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(parameters);
  let validate = compiled.get(key);
  if (!validate) {
    const result = compileToolParameters(parameters);
    if (!result.ok) throw new Error(`the tool's parameters ${result.problem}`);
    validate = result.validate;
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
    compiled.set(key, validate);
  }
  return validate;
}

export type CheckedArguments =
  | { ok: true; arguments: Record<string, unknown> }
  | { ok: false; arguments: Record<string, unknown>; details: string };

/**
 * The model's arguments (JSON text as it streamed them) as an object that fits `parameters`, or
 * why not: not JSON, not an object, or the schema's first complaint (`/date must be string`).
 */
export function checkToolArguments(raw: string, parameters: Record<string, unknown>): CheckedArguments {
  let value: unknown;
  try {
    value = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch {
    return { ok: false, arguments: {}, details: 'the arguments are not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, arguments: {}, details: 'the arguments must be a JSON object' };
  }
  const args = value as Record<string, unknown>;
  let validate: ValidateFunction;
  try {
    validate = validatorOf(parameters);
  } catch (error) {
    return { ok: false, arguments: args, details: error instanceof Error ? error.message : String(error) };
  }
  if (validate(args)) return { ok: true, arguments: args };
  const [first] = validate.errors ?? [];
  const where = first?.instancePath || '(the arguments)';
  return { ok: false, arguments: args, details: `${where} ${first?.message ?? 'do not fit the parameters'}` };
}
