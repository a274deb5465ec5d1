import type { Context, Next } from 'koa';
import { httpRequestDuration, httpRequests } from '../../lib/metrics/service-metrics.js';

// Every answer of the API process counted by method, route and status, and timed
// (http_requests_total, http_request_duration_seconds). The route is the matched route's template
// (`/v1/calls/:call_id`), never the path itself: ids would make the label unbounded. Paths no
// route matched count as `unmatched`, the dashboard's pages as `dashboard`.

const OWN_PATHS = new Set(['/healthz', '/readyz', '/metrics', '/v1/openapi.json']);

export async function requestMetrics(ctx: Context, next: Next): Promise<void> {
  const started = performance.now();
  try {
    await next();
  } finally {
    const route = routeOf(ctx);
    const method = ctx.method;
    httpRequests.inc({ method, route, status: String(ctx.status) });
    httpRequestDuration.observe({ method, route }, (performance.now() - started) / 1000);
  }
}

function routeOf(ctx: Context): string {
  const matched = (ctx as Context & { _matchedRoute?: unknown })._matchedRoute;
  if (typeof matched === 'string') return matched;
  if (OWN_PATHS.has(ctx.path)) return ctx.path;
  if (ctx.path.startsWith('/v1/') || ctx.path === '/v1') return 'unmatched';
  return 'dashboard';
}
