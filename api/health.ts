import type { Context, Next } from 'koa';
import { readiness } from '../lib/health/readiness.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import type { AppDeps } from './http/route.js';

// The API process's health for orchestrators (docs/operations.md, "Health"): `GET /healthz`
// answers 200 while the process serves at all (liveness); `GET /readyz` answers 200 only when
// PostgreSQL answers, Temporal answers, and workers poll the calls and webhooks task queues
// (readiness), else 503 naming what is not. Both without a key, outside /v1, never cached.

export function healthEndpoints(deps: Pick<AppDeps, 'orm' | 'temporal' | 'settings'>) {
  const queues = taskQueues(deps.settings);
  return async (ctx: Context, next: Next) => {
    if (!['GET', 'HEAD'].includes(ctx.method) || (ctx.path !== '/healthz' && ctx.path !== '/readyz')) {
      return next();
    }
    ctx.set('Cache-Control', 'no-store');
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    const { ready, body } = await readiness({
      orm: deps.orm,
      temporal: deps.temporal,
      namespace: deps.settings.temporalNamespace,
      taskQueues: [
        { name: queues.calls, tasks: 'workflow' },
        { name: queues.webhooks, tasks: 'workflow' },
      ],
    });
    ctx.status = ready ? 200 : 503;
    ctx.body = body;
  };
}
