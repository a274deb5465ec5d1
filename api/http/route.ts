import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { ParameterizedContext } from 'koa';
import type { UserRole } from '../../db/entities/index.js';
import type { Orm } from '../../db/orm.js';
import type { Logger } from '../../lib/logger.js';
import type { Scope } from '../../lib/scopes.js';
import type { Settings } from '../../lib/settings.js';
import type { CommittedAnswer } from '../middleware/idempotency.js';
import type { ReadPool } from '../read-pool.js';

/*
 * Declarative route definitions: the contract every route module (api/routes/*.ts) follows.
 * A module exports an array of RouteDefinition; api/routes/index.ts lists the modules. The router
 * (api/http/router.ts) runs every request through the same pipeline, in this order:
 *
 *   1. X-Request-Id set; unknown method or path → 404 route_not_found
 *   2. auth: `Authorization: Bearer <key>` → 401 api_key_missing / api_key_invalid,
 *      503 auth_unavailable; without that header, a dashboard session cookie stands in for a key
 *      (the person's current role, every scope; docs/dashboard.md) → 401 session_missing,
 *      403 csrf_token_invalid on a change without its X-CSRF-Token, 403 workspace_not_selected
 *   3. rate limit per key → 429 rate_limited with Retry-After
 *   4. `scope` (a write scope includes the matching read) → 403 missing_scope;
 *      a viewer's key on any route whose scope is a write scope → 403 role_required;
 *      `roles` (e.g. ['owner','admin'] for webhook changes) → 403 role_required
 *   5. body read (POST/PATCH/PUT): limit 1 MiB → 400 body_too_large; a non-empty body needs
 *      Content-Type: application/json → 400 content_type_invalid
 *   6. `idempotent: true` and an Idempotency-Key header: the idempotency record is claimed here;
 *      everything below (validation refusals included) is stored and replayed byte for byte
 *   7. validation, params → query → body, from the JSON Schemas:
 *      not JSON / not an object → body_invalid; PATCH with no field → body_empty;
 *      unknown field or query parameter → parameter_unknown; required missing → parameter_missing;
 *      wrong type/format/bound → parameter_invalid (non-UUID path ids included). When several
 *      fields are wrong, unknown beats missing beats invalid, then the first in document order.
 *      `param` names the field: the top-level name (`name`, `limit`, `agent_id`), nested fields
 *      joined by dots (`metadata.foo`), array items by index (`events[1]`).
 *   8. handler(ctx, { params, query, body }) → { status, body, headers?, storedBody? }.
 *      The types of params, query and body are derived from the route's schemas (defineRoute),
 *      so a field the schema does not have cannot be read, nor one it has be left out.
 *      Throw ApiError (api/http/errors.ts) for every refusal; nothing else writes error bodies.
 *      `storedBody` is what an idempotent replay answers instead of `body` (secrets removed).
 *      A replay repeats status and body only; `headers` are not stored. A handler whose work
 *      commits to the database stores its answer in that transaction (storeAnswerWithWork in
 *      api/middleware/idempotency.ts); one with a step after the commit also defines `resume`.
 *
 * Query values arrive as strings and are coerced to the schema's types (`limit=5` → 5);
 * query schema defaults are applied (`limit` → 20). Body schemas get no defaults: handlers
 * apply them, so a PATCH never invents fields.
 *
 * ctx.state: requestId, auth ({ keyId, workspaceId, userId, role, scopes }), em (a request-scoped
 * EntityManager fork, created on first use), deps ({ settings, orm, temporal, logger }), logger
 * (deps.logger with request_id bound), reads (a plain pg pool for the hottest reads).
 */

export type JsonSchema = Record<string, unknown>;

/**
 * An OpenAPI link: where an id this answer returns can be used next (`parameters` maps the target
 * operation's parameter names to runtime expressions such as `$response.body#/id`). Clients and
 * test generators follow them (schemathesis' stateful phase does).
 */
export interface OpenApiLink {
  operationId: string;
  parameters: Record<string, string>;
  description?: string;
}

export interface RouteResponse {
  description: string;
  schema?: JsonSchema;
  /** The body's media type when it is not JSON (a recording's `audio/wav`); `schema` then describes the bytes. */
  mediaType?: string;
  /** Headers this answer carries beside X-Request-Id (Content-Range of a partial answer). */
  headers?: Record<string, HeaderDescription>;
  links?: Record<string, OpenApiLink>;
}

/** A request or response header as the OpenAPI document describes it. */
export interface HeaderDescription {
  description: string;
  required?: boolean;
  schema: JsonSchema;
}

export interface AppDeps {
  settings: Settings;
  orm: Orm;
  /** Connects on first use and then returns the same client. */
  temporal: () => Promise<Client>;
  logger: Logger;
}

export interface AuthInfo {
  /** The API key's id; for a dashboard session standing in for a key, the session's id. */
  keyId: string;
  /** Set when a dashboard session (cookie) made the request instead of an API key. */
  sessionId?: string;
  workspaceId: string;
  userId: string;
  /** The creating user's role as of the last key lookup (cached up to 30 s); a session's person's role now. */
  role: UserRole;
  scopes: string[];
}

export interface ApiState {
  requestId: string;
  auth: AuthInfo;
  em: EntityManager;
  deps: AppDeps;
  logger: Logger;
  /** Plain pg pool for the hottest reads (api/read-pool.ts); everything else uses `em`. */
  reads: ReadPool;
  /** The idempotency record this request holds, when it came with an Idempotency-Key. */
  idempotencyClaimId?: string;
}

export type ApiContext = ParameterizedContext<ApiState>;

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface RouteResult {
  status: number;
  body: unknown;
  /** Sent instead of `body` as JSON: bytes streamed as they are read (a recording). Never stored. */
  stream?: StreamedBody;
  headers?: Record<string, string>;
  /** Stored for idempotent replays instead of `body` (e.g. the webhook secret set to null). */
  storedBody?: unknown;
}

export interface StreamedBody {
  contentType: string;
  body: Readable;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

// What a handler receives for each of a route's schemas, as the router hands it over: path
// params are the path's names only; query defaults are applied (so `limit` is always there), body
// defaults are not (a PATCH never invents fields, so a defaulted body field stays optional).
// No schema: no fields.
export type ParamsOf<S> = S extends JSONSchema ? NamedOnly<FromSchema<S>> : NoFields;
export type QueryOf<S> = S extends JSONSchema ? FromSchema<S> : NoFields;
export type BodyOf<S> = S extends JSONSchema
  ? FromSchema<S, { keepDefaultedPropertiesOptional: true }>
  : NoFields;
type SchemaObject = Exclude<JSONSchema, boolean>;
type NoFields = Record<never, never>;
type NamedOnly<T> = { [K in keyof T as string extends K ? never : K]: T[K] };

/** A route as the router and the OpenAPI document read it (the handler's input types erased). */
export interface RouteDefinition {
  method: HttpMethod;
  /** Relative to /v1, koa-router syntax: `/agents/:agent_id`. */
  path: string;
  operationId: string;
  summary: string;
  /** The scope needed; null = any valid key (GET /me). */
  scope: Scope | null;
  /** Only keys made by users with one of these roles (403 role_required). */
  roles?: ('owner' | 'admin')[];
  /** JSON Schemas (type object) for path params, query and body. No body schema = no body fields. */
  params?: JsonSchema;
  query?: JsonSchema;
  body?: JsonSchema;
  /** Request headers the handler reads (`Range`), for the OpenAPI document; the handler checks them. */
  requestHeaders?: Record<string, HeaderDescription>;
  responses: Record<number, RouteResponse>;
  /** Takes an Idempotency-Key (creating POSTs). */
  idempotent?: boolean;
  handler(ctx: ApiContext, input: RouteInput<unknown, unknown, unknown>): Promise<RouteResult>;
  /**
   * Finishes a request whose work committed under its Idempotency-Key (storeAnswerWithWork with
   * `confirmed: false`) but whose process stopped before confirming the rest. Must not redo the
   * work; throws ApiError like a handler. The committed answer is then replayed.
   */
  resume?(ctx: ApiContext, committed: CommittedAnswer): Promise<void>;
}

/** A route as written: its schemas are `as const`, so the handler's input is typed from them. */
export type TypedRouteDefinition<PS, QS, BS> = Omit<
  RouteDefinition,
  'params' | 'query' | 'body' | 'handler'
> & {
  params?: PS;
  query?: QS;
  body?: BS;
  handler(ctx: ApiContext, input: RouteInput<ParamsOf<PS>, QueryOf<QS>, BodyOf<BS>>): Promise<RouteResult>;
};

/** Identity helper that types the handler's input from the route's schemas. */
export function defineRoute<
  const PS extends SchemaObject | undefined = undefined,
  const QS extends SchemaObject | undefined = undefined,
  const BS extends SchemaObject | undefined = undefined,
>(route: TypedRouteDefinition<PS, QS, BS>): RouteDefinition {
  return route;
}
