import Koa, { type Context, type Next } from 'koa';
import { dashboardUrl } from '../lib/dashboard/url.js';
import { ormPool, watchDatabase, watchPool } from '../lib/metrics/database-metrics.js';
import { tracingActive } from '../lib/tracing/tracing.js';
import { apiReference } from './api-reference.js';
import { ApiKeyAuthenticator } from './auth/api-key-authenticator.js';
import { RateLimiter } from './auth/rate-limiter.js';
import { AUTH_PREFIX } from './dashboard/auth-routes.js';
import { DASHBOARD_API_PREFIX, dashboard } from './dashboard/dashboard.js';
import { SessionStore } from './dashboard/sessions.js';
import { TalkRelays } from './dashboard/talk-socket.js';
import { healthEndpoints } from './health.js';
import { openApiDocument } from './http/openapi.js';
import type { ApiState, AppDeps, RouteDefinition } from './http/route.js';
import { API_PREFIX, buildRouter } from './http/router.js';
import { unreadableRequestHandler } from './http/unreadable-request.js';
import { upgradeThrough } from './http/websocket-upgrade.js';
import { errorMiddleware } from './middleware/errors.js';
import { requestContext } from './middleware/request-context.js';
import { requestMetrics } from './middleware/request-metrics.js';
import { requestTracing } from './middleware/request-tracing.js';
import { createReadPool } from './read-pool.js';
import { allRoutes } from './routes/index.js';

export interface ApiApp {
  koa: Koa<ApiState>;
  /** The HTTP server's `clientError` listener: requests Node cannot parse get the spec's 400. */
  onClientError: ReturnType<typeof unreadableRequestHandler>;
  /** The HTTP server's `upgrade` listener: WebSocket upgrades run through the same pipeline (the test panel's Talk). */
  onUpgrade: ReturnType<typeof upgradeThrough>;
  /** Ends the WebSockets taken by upgrades (each Talk call hears its caller hang up). Call when the server stops. */
  closeSockets(): Promise<void>;
  /** Flushes rate-limit counts and closes the read pool. Call after the server closed. */
  close(): Promise<void>;
}

/**
 * The API as a Koa app. `routes` defaults to every route module; tests may add their own.
 * GET /v1/openapi.json needs no key and describes exactly the routes served (not the dashboard's);
 * GET /docs renders it.
 */
export function createApp(
  deps: AppDeps,
  options: {
    routes?: RouteDefinition[];
    /** The rate limiter's clock (ms); tests pin it so a run of requests shares one window. */
    rateLimitClock?: () => number;
    /** false: requests are not counted (bench/api.ts measures what counting costs). */
    requestMetrics?: boolean;
  } = {},
): ApiApp {
  const routes = options.routes ?? allRoutes;
  const authenticator = new ApiKeyAuthenticator(deps.orm);
  const rateLimiter = new RateLimiter(deps.orm, deps.logger, options.rateLimitClock);
  const services = { authenticator, rateLimiter, sessions: new SessionStore(deps.orm) };
  const reads = createReadPool(deps.orm, deps.logger);
  const unwatch = [watchPool('reads', () => reads), watchPool('orm', ormPool(deps.orm))];
  watchDatabase(deps.orm);
  const openApiText = JSON.stringify(openApiDocument(routes));

  // Behind TRUST_PROXY reverse proxies the client is the address the outermost of them saw
  // (X-Forwarded-For, counted from the right, so a forged entry on the left is never used);
  // otherwise the connection's peer. Per-address limits (sign-in) count that address.
  const hops = deps.settings.trustProxyHops;
  const koa = new Koa<ApiState>({ proxy: hops > 0, proxyIpHeader: 'X-Forwarded-For', maxIpsCount: hops });
  koa.silent = true;
  if (options.requestMetrics !== false) koa.use(requestMetrics);
  // Tracing is on for the process before its app is made (api/main.ts), or not at all.
  if (tracingActive()) koa.use(requestTracing);
  koa.use(requestContext(deps, reads));
  koa.use(errorMiddleware);
  koa.use(noStore);
  koa.use(async (ctx, next) => {
    if (ctx.path !== `${API_PREFIX}/openapi.json` || !['GET', 'HEAD'].includes(ctx.method)) return next();
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = openApiText;
  });
  // Liveness and readiness for orchestrators, and the API reference page (GET /docs, rendered
  // from the document above), before the dashboard takes every other path.
  koa.use(healthEndpoints(deps));
  koa.use(apiReference);
  // The dashboard answers every path outside /v1 (pages, its sign-in and its own endpoints).
  const talkRelays = new TalkRelays();
  const publicUrl = dashboardUrl(deps.settings);
  koa.use(
    dashboard(deps.orm, services, {
      secure: publicUrl.startsWith('https:'),
      talkRelays,
      // Talk sockets must come from the dashboard's own pages: DASHBOARD_URL's origin when set.
      dashboardOrigin: deps.settings.dashboardUrl ? new URL(publicUrl).origin : null,
    }),
  );
  koa.use(buildRouter(routes, services));

  return {
    koa,
    onClientError: unreadableRequestHandler(deps.logger),
    onUpgrade: upgradeThrough(koa.callback()),
    closeSockets: () => talkRelays.closeAll(),
    async close() {
      await rateLimiter.close();
      for (const stop of unwatch) stop();
      await reads.end();
    },
  };
}

/**
 * Every answer of the API and of the dashboard's endpoints is one caller's data, and some carry a
 * secret (a new key, a webhook's signing secret) or the session's CSRF token: no cache, shared or
 * private, may keep one. The OpenAPI document and the dashboard's assets may be cached.
 */
const NO_STORE_PREFIXES = [`${API_PREFIX}/`, `${DASHBOARD_API_PREFIX}/`, `${AUTH_PREFIX}/`];

async function noStore(ctx: Context, next: Next) {
  if (ctx.path !== `${API_PREFIX}/openapi.json` && NO_STORE_PREFIXES.some((p) => ctx.path.startsWith(p))) {
    ctx.set('Cache-Control', 'no-store');
  }
  await next();
}
