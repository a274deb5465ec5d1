import type { Context, Middleware } from 'koa';
import type { Orm } from '../../db/orm.js';
import { routeNotFound } from '../http/errors.js';
import type { ApiState } from '../http/route.js';
import { API_PREFIX, buildRouter, type RouterServices } from '../http/router.js';
import { dashboardAssets } from './assets.js';
import { AUTH_PREFIX, authRoutes } from './auth-routes.js';
import { callEvents } from './call-events.js';
import { dashboardPages } from './pages.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { callEventsSentRoutes } from './routes/call-events-sent.js';
import { dashboardCallToolCallRoutes } from './routes/call-tool-calls.js';
import { callTurnRoutes } from './routes/call-turns.js';
import { deliveryAttemptRoutes } from './routes/delivery-attempts.js';
import { talkRoutes } from './routes/talk.js';
import { testCallRoutes } from './routes/test-calls.js';
import { voiceRoutes } from './routes/voices.js';
import { SignInLimiter } from './sign-in-limiter.js';
import { type TalkRelays, talkSockets } from './talk-socket.js';

// The dashboard, served by the API process on the same port under `/` (operations contract,
// section 8). Its data comes from /v1 itself, with the session standing in for a key; the few
// things /v1 has no endpoint for (keys, the test panel, voices, attempts) are routes under /dashboard/api
// that run through the same pipeline (api/http/router.ts) and take only a session. Everything outside
// /v1 is the dashboard's; /v1 stays exactly as it was.

export const DASHBOARD_API_PREFIX = '/dashboard/api';

export const dashboardApiRoutes = [
  ...apiKeyRoutes,
  ...callEventsSentRoutes,
  ...dashboardCallToolCallRoutes,
  ...callTurnRoutes,
  ...deliveryAttemptRoutes,
  ...testCallRoutes,
  ...talkRoutes,
  ...voiceRoutes,
];

export function dashboard(
  orm: Orm,
  services: RouterServices,
  options: { secure: boolean; talkRelays: TalkRelays; dashboardOrigin: string | null },
): Middleware<ApiState> {
  // Built while the API starts, so the first page is served at once.
  void dashboardAssets().catch(() => {});
  const secureCookies = (ctx: Context) => options.secure || ctx.secure;
  const auth = authRoutes({ sessions: services.sessions, limiter: new SignInLimiter(orm), secureCookies });
  const events = callEvents(services);
  const talk = talkSockets(services, options.talkRelays, options);
  const api = buildRouter(dashboardApiRoutes, services, {
    prefix: DASHBOARD_API_PREFIX,
    credentials: 'session',
  });
  const pages = dashboardPages(services.sessions);
  return async (ctx, next) => {
    const path = ctx.path;
    if (path === API_PREFIX || path.startsWith(`${API_PREFIX}/`)) return next();
    if (path.startsWith(`${AUTH_PREFIX}/`))
      return (auth as unknown as Middleware<ApiState>)(ctx, notFound(ctx));
    if (path.startsWith(`${DASHBOARD_API_PREFIX}/`)) {
      return talk(ctx, () =>
        events(ctx, () => (api as unknown as Middleware<ApiState>)(ctx, async () => {})),
      );
    }
    return pages(ctx, next);
  };
}

function notFound(ctx: Context) {
  return async () => {
    throw routeNotFound(ctx.method, ctx.path);
  };
}
