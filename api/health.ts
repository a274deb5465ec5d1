import proto from '@temporalio/proto';
import type { Context, Next } from 'koa';
import { taskQueues } from '../lib/temporal/task-queues.js';
import type { AppDeps } from './http/route.js';

// The API process's health for orchestrators (docs/operations.md, "Health"): `GET /healthz`
// answers 200 while the process serves at all (liveness); `GET /readyz` answers 200 only when
// PostgreSQL answers, Temporal answers, and workers poll the calls and webhooks task queues
// (readiness), else 503 naming what is not. Both without a key, outside /v1, never cached.

/** Each dependency gets this long to answer before it counts as unavailable. */
const CHECK_TIMEOUT_MS = 2000;

type CheckResult = 'ok' | 'unavailable' | 'no workers polling';

export function healthEndpoints(deps: Pick<AppDeps, 'orm' | 'temporal' | 'settings'>) {
  return async (ctx: Context, next: Next) => {
    if (!['GET', 'HEAD'].includes(ctx.method) || (ctx.path !== '/healthz' && ctx.path !== '/readyz')) {
      return next();
    }
    ctx.set('Cache-Control', 'no-store');
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    const checks = await readiness(deps);
    const ready = Object.values(checks).every((check) => check === 'ok');
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'not_ready', checks };
  };
}

async function readiness(deps: Pick<AppDeps, 'orm' | 'temporal' | 'settings'>) {
  const [database, workers] = await Promise.all([
    check(async () => {
      await deps.orm.em.getConnection().execute('select 1');
      return 'ok';
    }),
    check(async () => {
      const client = await deps.temporal();
      const queues = taskQueues(deps.settings);
      const polled = await Promise.all(
        [queues.calls, queues.webhooks].map(async (name) => {
          const answer = await client.workflowService.describeTaskQueue({
            namespace: deps.settings.temporalNamespace,
            taskQueue: { name },
            taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
          });
          return (answer.pollers?.length ?? 0) > 0;
        }),
      );
      return polled.every(Boolean) ? 'ok' : 'no workers polling';
    }),
  ]);
  // Temporal answered when the task queues could be described at all.
  return { database, temporal: workers === 'unavailable' ? 'unavailable' : 'ok', workers } satisfies Record<
    string,
    CheckResult
  >;
}

async function check(probe: () => Promise<CheckResult>): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve('unavailable'), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([probe().catch((): CheckResult => 'unavailable'), late]);
  } finally {
    clearTimeout(timer);
  }
}
