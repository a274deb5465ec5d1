import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import { isUuid } from '../lib/uuid.js';
import { parameterInvalid } from './errors.js';

// Cursor pagination for every list: newest first on a timestamp column, the id as tiebreak, so
// the order is total and stable while rows are added. The cursor is opaque to clients: base64url
// of [timestamp in ms, id] of the last row of the page.

export const DEFAULT_LIMIT = 20;
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
    minLength: 1,
    maxLength: 200,
    description: 'The next_cursor of the previous page.',
  },
} as const;

/** A list's whole query schema: pagination plus `extra` filters; anything else is parameter_unknown. */
export function listQuerySchema(extra: Record<string, unknown> = {}) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: { ...paginationQueryProperties, ...extra },
  };
}

export interface PageQuery {
  limit: number;
  cursor?: string;
}

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

export function encodeCursor(at: Date, id: string): string {
  return Buffer.from(JSON.stringify([at.getTime(), id])).toString('base64url');
}

/**
 * The position a cursor names. Anything the API could not have issued is refused here, before it
 * reaches SQL, where a time out of range or an id that is not a UUID would fail as a 500.
 */
export function decodeCursor(cursor: string): Cursor {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(decoded) && decoded.length === 2) {
      const [ms, id] = decoded;
      const at = new Date(ms);
      const inRange = Number.isSafeInteger(ms) && ms >= 0 && !Number.isNaN(at.getTime());
      if (inRange && isUuid(id)) return { at, id };
    }
  } catch {
    // falls through to the refusal below
  }
  throw parameterInvalid('cursor', 'cursor is not a next_cursor this API returned.');
}

/**
 * One page of `entity` rows matching `where`, newest first on `orderBy` (a Date property), id as
 * tiebreak. `present` turns each row into its API object.
 */
export async function paginate<T extends { id: string }, R>(
  em: EntityManager,
  entity: new (...args: never[]) => T,
  where: FilterQuery<T>,
  page: PageQuery,
  options: { orderBy: keyof T & string; present: (row: T) => R },
): Promise<ListEnvelope<R>> {
  const column = options.orderBy;
  let filter = where;
  if (page.cursor) {
    const { at, id } = decodeCursor(page.cursor);
    const after = { $or: [{ [column]: { $lt: at } }, { [column]: at, id: { $lt: id } }] };
    filter = { $and: [where, after] } as FilterQuery<T>;
  }
  const rows = await em.find(entity, filter, {
    orderBy: { [column]: 'desc', id: 'desc' } as never,
    limit: page.limit + 1,
  });
  const hasMore = rows.length > page.limit;
  const data = hasMore ? rows.slice(0, page.limit) : rows;
  const last = data.at(-1);
  return {
    object: 'list',
    data: data.map(options.present),
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeCursor(last[column] as Date, last.id) : null,
  };
}

/**
 * One page of `entity` rows in ascending order of an integer column (`position`: the order a list
 * was given in), id as tiebreak. The cursor has the same form, [position, id].
 */
export async function paginateInOrder<T extends { id: string }, R>(
  em: EntityManager,
  entity: new (...args: never[]) => T,
  where: FilterQuery<T>,
  page: PageQuery,
  options: { orderBy: keyof T & string; present: (row: T) => R },
): Promise<ListEnvelope<R>> {
  const column = options.orderBy;
  let filter = where;
  if (page.cursor) {
    const { at, id } = decodeCursor(page.cursor);
    const position = at.getTime();
    const after = { $or: [{ [column]: { $gt: position } }, { [column]: position, id: { $gt: id } }] };
    filter = { $and: [where, after] } as FilterQuery<T>;
  }
  const rows = await em.find(entity, filter, {
    orderBy: { [column]: 'asc', id: 'asc' } as never,
    limit: page.limit + 1,
  });
  const hasMore = rows.length > page.limit;
  const data = hasMore ? rows.slice(0, page.limit) : rows;
  const last = data.at(-1);
  return {
    object: 'list',
    data: data.map(options.present),
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeCursor(new Date(last[column] as number), last.id) : null,
  };
}
