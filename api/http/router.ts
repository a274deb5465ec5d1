import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { isDatabaseUnavailable } from '../../db/database-errors.js';
import { grants, SCOPES } from '../../lib/scopes.js';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator.js';
import type { RateLimiter } from '../auth/rate-limiter.js';
import { csrfTokenMatches, type SessionStore, sessionToken } from '../dashboard/sessions.js';
import { errorOutcome } from '../middleware/errors.js';
import {
  type CommittedAnswer,
  fingerprintOf,
  idempotencyKeyOf,
  replay,
  runIdempotently,
} from '../middleware/idempotency.js';
import { isStorableStatus, type Outcome, sendOutcome } from '../middleware/outcome.js';
import {
  apiKeyMissing,
  authUnavailable,
  bodyEmpty,
  csrfTokenInvalid,
  missingScope,
  rateLimited,
  roleRequired,
  routeNotFound,
  sessionMissing,
  workspaceNotSelected,
} from './errors.js';
import { parseJsonObject, readRawBody } from './request-body.js';
import type { ApiContext, ApiState, RouteDefinition } from './route.js';
import { withStorableText } from './storable-text.js';
import { compileBodyValidator, compileQueryValidator, type Validator } from './validation.js';

// Turns route definitions into Koa routes, each running the pipeline described in api/http/route.ts.

export const API_PREFIX = '/v1';
const BODY_METHODS = new Set(['POST', 'PATCH', 'PUT']);
/** The schema of a route's query or body when it declares none: no fields at all. */
const NO_FIELDS = { type: 'object', additionalProperties: false, properties: {} };

interface CompiledRoute {
  route: RouteDefinition;
  params: Validator | null;
  query: Validator;
  body: Validator;
}

export interface RouterServices {
  authenticator: ApiKeyAuthenticator;
  rateLimiter: RateLimiter;
  sessions: SessionStore;
}

/**
 * Who may call: `/v1` takes an API key, or a dashboard session standing in for one (the
 * dashboard acts through the same routes); the dashboard's own endpoints take only a session.
 */
export type Credentials = 'api_key_or_session' | 'session';

export function buildRouter(
  routes: RouteDefinition[],
  services: RouterServices,
  options: { prefix?: string; credentials?: Credentials } = {},
): Middleware {
  const credentials = options.credentials ?? 'api_key_or_session';
  // Paths match exactly as documented: no trailing slash, no other letter case.
  const router = new Router<ApiState>({
    prefix: options.prefix ?? API_PREFIX,
    strict: true,
    sensitive: true,
  });
  for (const route of routes) {
    const compiled: CompiledRoute = {
      route,
      params: route.params ? compileQueryValidator(withStorableText(route.params)) : null,
      query: compileQueryValidator(withStorableText(route.query ?? NO_FIELDS)),
      body: compileBodyValidator(withStorableText(route.body ?? NO_FIELDS)),
    };
    router.register(route.path, [route.method], (ctx) =>
      handle(ctx as ApiContext, compiled, services, credentials),
    );
  }
  const routesMiddleware = router.routes() as unknown as Middleware;
  return async (ctx, next) => {
    await routesMiddleware(ctx, async () => {
      throw routeNotFound(ctx.method, ctx.path);
    });
    await next();
  };
}

async function handle(
  ctx: ApiContext,
  compiled: CompiledRoute,
  services: RouterServices,
  credentials: Credentials,
) {
  const { route } = compiled;
  await authenticate(ctx, services, credentials);
  authorize(ctx, route);

  const rawBody = BODY_METHODS.has(ctx.method) ? await readRawBody(ctx) : '';
  const idempotencyKey = route.idempotent ? idempotencyKeyOf(ctx) : undefined;
  const run = () => execute(ctx, compiled, rawBody);
  const outcome = idempotencyKey
    ? await runIdempotently(
        ctx,
        { key: idempotencyKey, fingerprint: fingerprintOf({ ...ctx.query }, rawBody) },
        run,
        (committed) => resume(ctx, route, committed),
      )
    : await run();
  sendOutcome(ctx, outcome);
}

/**
 * Steps 2 and 3 of the pipeline: sets ctx.state.auth from the API key, or from the dashboard
 * session cookie when no Authorization header is sent, then counts the request against the
 * workspace's request rate. A session acts with its person's current role and every scope (a key
 * of theirs could have any), so authorize() applies the same role rules to both. A session's
 * state-changing request must carry its CSRF token.
 */
export async function authenticate(ctx: ApiContext, services: RouterServices, credentials: Credentials) {
  const authorization = ctx.get('Authorization') || undefined;
  const cookie = sessionToken(ctx);
  let bucket: string;
  let requestsPerSecond: number;
  if (credentials === 'api_key_or_session' && (authorization || !cookie)) {
    const key = await services.authenticator.authenticate(authorization);
    ctx.state.auth = {
      keyId: key.keyId,
      workspaceId: key.workspaceId,
      userId: key.userId,
      role: key.role,
      scopes: key.scopes,
    };
    bucket = `key:${key.keyId}`;
    requestsPerSecond = key.requestsPerSecond;
  } else {
    if (!cookie) throw credentials === 'session' ? sessionMissing() : apiKeyMissing();
    const session = await services.sessions.find(cookie).catch((error: unknown) => {
      // Only a database that cannot be reached is a retryable 503; anything else is a bug (500).
      throw isDatabaseUnavailable(error) ? authUnavailable() : error;
    });
    if (!session) throw sessionMissing();
    if (
      !['GET', 'HEAD'].includes(ctx.method) &&
      !csrfTokenMatches(ctx.get('X-CSRF-Token'), session.csrfToken)
    ) {
      throw csrfTokenInvalid();
    }
    if (!session.member) throw workspaceNotSelected();
    ctx.state.auth = {
      keyId: session.sessionId,
      sessionId: session.sessionId,
      workspaceId: session.member.workspaceId,
      userId: session.member.userId,
      role: session.member.role,
      scopes: [...SCOPES],
    };
    bucket = `session:${session.sessionId}`;
    requestsPerSecond = session.member.requestsPerSecond;
  }
  const decision = await services.rateLimiter.take(bucket, requestsPerSecond);
  if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds);
}

/** Scope, then role: a viewer only reads; `roles` narrows further (webhook changes). */
export function authorize(ctx: ApiContext, route: RouteDefinition) {
  const { auth } = ctx.state;
  if (route.scope && !grants(auth.scopes, route.scope)) throw missingScope(route.scope);
  if (auth.role === 'viewer' && (route.scope?.endsWith(':write') || route.roles)) {
    throw roleRequired(
      auth.sessionId
        ? 'You are a viewer in this workspace, and viewers can only read.'
        : 'This API key was made by a viewer, and viewers can only read.',
    );
  }
  if (route.roles && !route.roles.includes(auth.role as 'owner' | 'admin')) {
    throw roleRequired(`Only keys made by a workspace ${route.roles.join(' or ')} may do this.`);
  }
}

/** Finishes what an earlier request with the same key committed, then answers its stored answer. */
async function resume(ctx: ApiContext, route: RouteDefinition, committed: CommittedAnswer): Promise<Outcome> {
  try {
    await route.resume?.(ctx, committed);
  } catch (error) {
    return errorOutcome(ctx.state, error);
  }
  return { ...replay(committed.status, committed.bodyText), storable: true };
}

/** Validation and the handler; every refusal comes back as an Outcome, never thrown. */
async function execute(ctx: ApiContext, compiled: CompiledRoute, rawBody: string): Promise<Outcome> {
  try {
    const params = { ...((ctx as unknown as Context & { params?: Record<string, string> }).params ?? {}) };
    const paramsError = compiled.params?.(params);
    if (paramsError) throw paramsError;

    const query: Record<string, unknown> = { ...ctx.query };
    const queryError = compiled.query(query);
    if (queryError) throw queryError;

    let body: Record<string, unknown> = {};
    if (BODY_METHODS.has(ctx.method)) {
      body = parseJsonObject(rawBody) ?? {};
      if (ctx.method === 'PATCH' && Object.keys(body).length === 0) throw bodyEmpty();
      const bodyError = compiled.body(body);
      if (bodyError) throw bodyError;
    }

    const result = await compiled.route.handler(ctx, { params, query, body });
    const bodyText = JSON.stringify(result.body);
    return {
      status: result.status,
      bodyText,
      headers: result.headers ?? {},
      storable: isStorableStatus(result.status),
      storedText: result.storedBody === undefined ? undefined : JSON.stringify(result.storedBody),
      stream: result.stream,
    };
  } catch (error) {
    return errorOutcome(ctx.state, error);
  }
}
