import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { JSONSchema } from 'json-schema-to-ts';
import { parameterInvalid } from './errors.js';
import type { QueryOf } from './route.js';

// Cursor pagination for every list: newest first on a timestamp column, the id as tiebreak, so
// the order is total and stable while rows are added. The cursor is opaque to clients: base64url
// of 22 bytes, the last row's timestamp in ms (6 bytes, big-endian) and its id (16 bytes). Every
// string matching CURSOR_PATTERN names a position a list can start after, so the document's
// pattern says exactly which cursors are accepted.

export const DEFAULT_LIMIT = 20;
/**
 * 30 base64url characters, 22 bytes. The first character keeps the timestamp's top bit 0 (below
 * 2^47 ms, the year 6429), so every cursor of this form is a position PostgreSQL can compare with.
 */
export const CURSOR_PATTERN = '^[A-Za-f][A-Za-z0-9_-]{29}$';
const CURSOR_BYTES = 22;
export const MAX_LIMIT = 100;

/** Query schema properties for `limit` and `cursor`; lists spread it and add their own filters. */
export const paginationQueryProperties = {
  limit: {
    type: 'integer',
    minimum: 1,
    maximum: MAX_LIMIT,
    default: DEFAULT_LIMIT,
    description: 'Page size, 1 to 100.',
  },
  cursor: {
    type: 'string',
    pattern: CURSOR_PATTERN,
    maxLength: 30,
    description: 'The next_cursor of the previous page: 30 characters of base64url.',
  },
} as const;

/** A list's whole query schema: pagination plus `extra` filters; anything else is parameter_unknown. */
export function listQuerySchema<const E extends Record<string, JSONSchema> = Record<never, never>>(
  extra: E = {} as E,
) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: { ...paginationQueryProperties, ...extra },
  } as const;
}

/** `limit` and `cursor` as a list's handler receives them. */
export type PageQuery = QueryOf<ReturnType<typeof listQuerySchema<Record<never, never>>>>;

export interface ListEnvelope<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** The list envelope's JSON Schema around `item`. */
export function listSchema(item: Record<string, unknown>) {
  return {
    type: 'object',
    required: ['object', 'data', 'has_more', 'next_cursor'],
    additionalProperties: false,
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: item },
      has_more: { type: 'boolean' },
      next_cursor: { type: ['string', 'null'] },
    },
  };
}

interface Cursor {
  at: Date;
  id: string;
}

/** How a list's ids fill the cursor's 16 id bytes: UUIDs, or a prefix and 32 hex digits (`tc_…`). */
export interface CursorIds {
  toHex(id: string): string;
  fromHex(hex: string): string;
}

const uuidIds: CursorIds = {
  toHex: (id) => id.replaceAll('-', ''),
  fromHex: (hex) =>
    `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
};

export const prefixedHexIds = (prefix: string): CursorIds => ({
  toHex: (id) => id.slice(prefix.length),
  fromHex: (hex) => `${prefix}${hex}`,
});

export function encodeCursor(at: Date, id: string, ids: CursorIds = uuidIds): string {
  const bytes = Buffer.alloc(CURSOR_BYTES);
  bytes.writeUIntBE(at.getTime(), 0, 6);
  Buffer.from(ids.toHex(id), 'hex').copy(bytes, 6);
  return bytes.toString('base64url');
}

/**
 * The position a cursor names. The schema's pattern already refused anything else; this check
 * stays for callers that did not go through it, so nothing malformed reaches SQL.
 */
export function decodeCursor(cursor: string, ids: CursorIds = uuidIds): Cursor {
  if (!new RegExp(CURSOR_PATTERN).test(cursor)) {
    throw parameterInvalid('cursor', 'cursor is not a next_cursor this API returned.');
  }
  const bytes = Buffer.from(cursor, 'base64url');
  const id = ids.fromHex(bytes.subarray(6, CURSOR_BYTES).toString('hex'));
  return { at: new Date(bytes.readUIntBE(0, 6)), id };
}

interface PageOptions<T, R> {
  orderBy: keyof T & string;
  present: (row: T) => R;
  /** The ids' form in the cursor; default UUIDs. */
  ids?: CursorIds;
}

interface TimestampPageOptions<T, R> extends PageOptions<T, R> {
  /** Oldest first instead, for what reads as a story (a call's tool calls). */
  oldestFirst?: boolean;
}

/**
 * One page of `entity` rows matching `where`, newest first on `orderBy` (a Date property), id as
 * tiebreak. `present` turns each row into its API object.
 */
export function paginate<T extends { id: string }, R>(
  em: EntityManager,
  entity: new (...args: never[]) => T,
  where: FilterQuery<T>,
  page: PageQuery,
  options: TimestampPageOptions<T, R>,
): Promise<ListEnvelope<R>> {
  return keysetPage(em, entity, where, page, options, {
    direction: options.oldestFirst ? 'asc' : 'desc',
    fromCursor: (at) => at,
    toCursor: (value) => value as Date,
  });
}

/**
 * One page of `entity` rows in ascending order of an integer column (`position`: the order a list
 * was given in), id as tiebreak. The cursor has the same form, [position, id].
 */
export function paginateInOrder<T extends { id: string }, R>(
  em: EntityManager,
  entity: new (...args: never[]) => T,
  where: FilterQuery<T>,
  page: PageQuery,
  options: PageOptions<T, R>,
): Promise<ListEnvelope<R>> {
  return keysetPage(em, entity, where, page, options, {
    direction: 'asc',
    fromCursor: (at) => at.getTime(),
    toCursor: (value) => new Date(value as number),
  });
}

/** Keyset pagination on (column, id) in one direction; the cursor carries the last row's pair. */
async function keysetPage<T extends { id: string }, R>(
  em: EntityManager,
  entity: new (...args: never[]) => T,
  where: FilterQuery<T>,
  page: PageQuery,
  options: PageOptions<T, R>,
  order: { direction: 'asc' | 'desc'; fromCursor: (at: Date) => unknown; toCursor: (value: unknown) => Date },
): Promise<ListEnvelope<R>> {
  const column = options.orderBy;
  const beyond = order.direction === 'desc' ? '$lt' : '$gt';
  let filter = where;
  if (page.cursor) {
    const { at, id } = decodeCursor(page.cursor, options.ids);
    const value = order.fromCursor(at);
    const after = { $or: [{ [column]: { [beyond]: value } }, { [column]: value, id: { [beyond]: id } }] };
    filter = { $and: [where, after] } as FilterQuery<T>;
  }
  const rows = await em.find(entity, filter, {
    orderBy: { [column]: order.direction, id: order.direction } as never,
    limit: page.limit + 1,
  });
  const hasMore = rows.length > page.limit;
  const data = hasMore ? rows.slice(0, page.limit) : rows;
  const last = data.at(-1);
  return {
    object: 'list',
    data: data.map(options.present),
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeCursor(order.toCursor(last[column]), last.id, options.ids) : null,
  };
}
