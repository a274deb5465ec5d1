import type { Context, Next } from 'koa';
import { httpRequestDuration, httpRequests } from '../../lib/metrics/service-metrics.js';

// Every answer of the API process counted by method, route and status, and timed
// (http_requests_total, http_request_duration_seconds). The route is the matched route's template
// (`/v1/calls/:call_id`), never the path itself: ids would make the label unbounded. Paths no
// route matched count as `unmatched`, the dashboard's pages as `dashboard`. The labelled series
// are looked up once and kept: prom-client hashes a label object at every call, which cost a few
// percent of a fast read's throughput (docs/performance.md, "Metrics and tracing").

const OWN_PATHS = new Set([
  '/healthz',
  '/readyz',
  '/metrics',
  '/v1/openapi.json',
  // The API reference page and its script (api/api-reference.ts).
  '/docs',
  '/docs/assets/scalar-api-reference.js',
]);

type CounterChild = ReturnType<typeof httpRequests.labels>;
type HistogramChild = ReturnType<typeof httpRequestDuration.labels>;
const counters = new Map<string, CounterChild>();
const timers = new Map<string, HistogramChild>();

export async function requestMetrics(ctx: Context, next: Next): Promise<void> {
  const started = performance.now();
  try {
    await next();
  } finally {
    const seconds = (performance.now() - started) / 1000;
    const route = routeOf(ctx);
    const { method } = ctx;
    const status = ctx.status;
    const series = `${method} ${route}`;
    const counted = `${series} ${status}`;
    let counter = counters.get(counted);
    if (!counter) {
      counter = httpRequests.labels(method, route, String(status));
      counters.set(counted, counter);
    }
    counter.inc();
    let timer = timers.get(series);
    if (!timer) {
      timer = httpRequestDuration.labels(method, route);
      timers.set(series, timer);
    }
    timer.observe(seconds);
  }
}

function routeOf(ctx: Context): string {
  const matched = (ctx as Context & { _matchedRoute?: unknown })._matchedRoute;
  if (typeof matched === 'string') return matched;
  if (OWN_PATHS.has(ctx.path)) return ctx.path;
  if (ctx.path.startsWith('/v1/') || ctx.path === '/v1') return 'unmatched';
  return 'dashboard';
}
