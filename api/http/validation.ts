import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { UUID_PATTERN } from '../../lib/uuid.js';
import { BCP47_PATTERN } from '../schemas/bcp47.js';
import { type ApiError, parameterInvalid, parameterMissing, parameterUnknown } from './errors.js';
import { withLengthFirst } from './length-first.js';
import { CURSOR_PATTERN } from './pagination.js';
import type { JsonSchema } from './route.js';
import { isStorableDateTime } from './storable-date-time.js';
import { NO_NUL_PATTERN } from './storable-text.js';

// ajv compiles every route's schemas once at start. Bodies are validated as sent (no coercion, no
// defaults); query strings and path params are coerced to the schema's types and get defaults.

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

function newAjv(options: { coerceTypes: boolean; useDefaults: boolean }) {
  const ajv = new Ajv({ allErrors: true, strict: false, ...options });
  addFormats(ajv, ['date-time', 'uri', 'email']);
  // ajv-formats' uuid also takes a `urn:uuid:` prefix, which PostgreSQL refuses (a 500).
  ajv.addFormat('uuid', UUID_PATTERN);
  // RFC 3339 less what cannot be stored: a leap second, years outside 0001..9999 (UTC).
  ajv.addFormat('date-time', { type: 'string', validate: isStorableDateTime });
  return ajv;
}

const bodyAjv = newAjv({ coerceTypes: false, useDefaults: false });
const queryAjv = newAjv({ coerceTypes: true, useDefaults: true });

export type Validator = (data: unknown) => ApiError | null;

export function compileBodyValidator(schema: JsonSchema): Validator {
  const validate = toValidator(bodyAjv.compile(withLengthFirst(schema)));
  return (data) => validate(data) ?? storableTextError(data);
}

/**
 * Text PostgreSQL cannot store as sent: a NUL character (text and jsonb refuse it, a 500) or an
 * unpaired surrogate (the driver would store U+FFFD instead, so later reads differ from the answer).
 * Run after the schema passed. Walked with a stack of its own, depth first in document order: a
 * free-form object (a tool's `parameters`) may be nested as deeply as the body limit allows.
 */
function storableTextError(data: unknown): ApiError | null {
  const refuse = (param: string) =>
    parameterInvalid(param, `${param} must be Unicode text without NUL characters.`);
  // [value, its param, its property name when it is an object's (checked as it is reached)]
  const stack: [value: unknown, path: string, key: string | null][] = [[data, '', null]];
  while (stack.length > 0) {
    const [value, path, key] = stack.pop()!;
    if (key !== null && (key.includes('\u0000') || !key.isWellFormed())) return refuse(path);
    if (typeof value === 'string') {
      if (value.includes('\u0000') || !value.isWellFormed()) return refuse(path || 'body');
    } else if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) {
        stack.push([value[index], `${path}[${index}]`, null]);
      }
    } else if (value && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let index = entries.length - 1; index >= 0; index--) {
        const [name, item] = entries[index]!;
        stack.push([item, join(path, name), name]);
      }
    }
  }
  return null;
}

/** For query and path params: strings are coerced to the schema's types, defaults filled in. */
export function compileQueryValidator(schema: JsonSchema): Validator {
  const validate = toValidator(queryAjv.compile(withLengthFirst(schema)));
  // ajv coerces anything JavaScript reads as a number (`0x10`, `1e1`, ` 5`); an integer parameter
  // takes decimal digits only.
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const integers = Object.keys(properties).filter((name) => properties[name]!.type === 'integer');
  return (data) => {
    const values = data as Record<string, unknown>;
    const notDecimal = integers.find(
      (name) => typeof values[name] === 'string' && !DECIMAL.test(values[name]),
    );
    const error = validate(data);
    if (error && error.code !== 'parameter_invalid') return error; // unknown and missing come first
    return notDecimal ? parameterInvalid(notDecimal, `${notDecimal} must be an integer.`) : error;
  };
}

const DECIMAL = /^-?[0-9]+$/;

function toValidator(validate: ValidateFunction): Validator {
  return (data) => (validate(data) ? null : toApiError(validate.errors ?? [], data));
}

const PRIORITY: Record<string, number> = { additionalProperties: 0, required: 1 };

/** The one error the client sees: unknown beats missing beats invalid, then document order. */
function toApiError(errors: ErrorObject[], data: unknown): ApiError {
  const relevant = errors.filter((e) => !['anyOf', 'oneOf', 'if'].includes(e.keyword));
  const ranked = (relevant.length ? relevant : errors)
    .map((error, index) => ({ error, index, rank: PRIORITY[error.keyword] ?? 2 }))
    .sort((a, b) => a.rank - b.rank || a.index - b.index);
  const { error } = ranked[0]!;
  const path = paramPath(error.instancePath, data);
  if (error.keyword === 'additionalProperties') {
    const param = join(path, String(error.params.additionalProperty));
    return parameterUnknown(param);
  }
  if (error.keyword === 'required') {
    const param = join(path, String(error.params.missingProperty));
    return parameterMissing(param);
  }
  const param = path || 'body';
  return parameterInvalid(param, `${param} ${describe(error)}.`);
}

/** `/metadata/foo` → `metadata.foo`; `/events/1` → `events[1]` (array items by index). */
function paramPath(instancePath: string, data: unknown): string {
  if (!instancePath) return '';
  let out = '';
  let node: unknown = data;
  for (const raw of instancePath.slice(1).split('/')) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(node)) {
      out += `[${segment}]`;
      node = node[Number(segment)];
    } else {
      out = join(out, segment);
      node = node && typeof node === 'object' ? (node as Record<string, unknown>)[segment] : undefined;
    }
  }
  return out;
}

function join(path: string, field: string): string {
  return path ? `${path}.${field}` : field;
}

const FORMAT_NAMES: Record<string, string> = {
  uuid: 'a UUID',
  'date-time': 'an ISO 8601 date-time with a time zone, from 0001 to 9999 UTC, without a leap second',
  uri: 'a URI',
  email: 'an email address',
};

/** What a pattern means, for the refusal's message (the pattern itself is in the document). */
const PATTERN_NAMES: Record<string, string> = {
  [BCP47_PATTERN]: 'must be a well-formed BCP 47 language tag such as nb-NO',
  [NO_NUL_PATTERN]: 'must be Unicode text without NUL characters',
  [CURSOR_PATTERN]: 'is not a next_cursor this API returned',
};

function describe(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return `must be ${Array.isArray(p.type) ? p.type.join(' or ') : `of type ${p.type}`}`;
    case 'maxLength':
      return `must be at most ${p.limit} characters`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${p.limit} characters`;
    case 'maximum':
      return `must be at most ${p.limit}`;
    case 'minimum':
      return `must be at least ${p.limit}`;
    case 'format':
      return `must be ${FORMAT_NAMES[String(p.format)] ?? `in format ${p.format}`}`;
    case 'enum': {
      const allowed = p.allowedValues as unknown[];
      // A long list (timezone names) is named by its place in the document, not spelled out.
      if (allowed.length > 12)
        return `must be one of the ${allowed.length} values listed in /v1/openapi.json`;
      return `must be one of ${allowed.map(String).join(', ')}`;
    }
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'maxProperties':
      return `must have at most ${p.limit} keys`;
    case 'maxItems':
      return `must have at most ${p.limit} items`;
    case 'minItems':
      return `must have at least ${p.limit} item${p.limit === 1 ? '' : 's'}`;
    case 'uniqueItems':
      return 'must not contain duplicates';
    case 'pattern':
      return PATTERN_NAMES[String(p.pattern)] ?? `must match the pattern ${p.pattern}`;
    default:
      return error.message ?? 'is invalid';
  }
}
