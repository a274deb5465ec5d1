import type { Context, Next } from 'koa';
import { readiness } from '../lib/health/readiness.js';
import { METRICS_CONTENT_TYPE, metricsText } from '../lib/metrics/exposition.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import type { AppDeps } from './http/route.js';

// The API process's health for orchestrators (docs/operations.md, "Health"): `GET /healthz`
// answers 200 while the process serves at all (liveness); `GET /readyz` answers 200 only when
// PostgreSQL answers, Temporal answers, and workers poll the calls, webhooks and tools task
// queues (readiness), else 503 naming what is not. `GET /metrics` is the process's Prometheus metrics
// (docs/operations.md, "Metrics"), here unless METRICS_PORT moves it to a port of its own. All
// without a key, outside /v1, never cached.

export function apiReadiness(deps: Pick<AppDeps, 'orm' | 'temporal' | 'settings'>) {
  const queues = taskQueues(deps.settings);
  return () =>
    readiness({
      orm: deps.orm,
      temporal: deps.temporal,
      namespace: deps.settings.temporalNamespace,
      taskQueues: [
        { name: queues.calls, tasks: 'workflow' },
        { name: queues.webhooks, tasks: 'workflow' },
        // The agents' tool requests (served beside the calls worker): activities only.
        { name: queues.tools, tasks: 'activity' },
      ],
    });
}

export function healthEndpoints(deps: Pick<AppDeps, 'orm' | 'temporal' | 'settings'>) {
  const ready = apiReadiness(deps);
  const paths = new Set(['/healthz', '/readyz', ...(deps.settings.metricsPort ? [] : ['/metrics'])]);
  return async (ctx: Context, next: Next) => {
    if (!['GET', 'HEAD'].includes(ctx.method) || !paths.has(ctx.path)) return next();
    ctx.set('Cache-Control', 'no-store');
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    if (ctx.path === '/metrics') {
      ctx.type = METRICS_CONTENT_TYPE;
      ctx.body = await metricsText();
      return;
    }
    const { ready: isReady, body } = await ready();
    ctx.status = isReady ? 200 : 503;
    ctx.body = body;
  };
}
