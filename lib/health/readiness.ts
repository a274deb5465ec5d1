import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { Orm } from '../../db/orm.js';

// Readiness of a process for orchestrators (`GET /readyz`, docs/operations.md "Health"): each
// dependency is probed with a short deadline, and the answer names what is not ready. Shared by
// the API (api/health.ts) and the media gateway (media/media-gateway.ts).

/** Each dependency gets this long to answer before it counts as unavailable. */
const CHECK_TIMEOUT_MS = 2000;

export type CheckResult = 'ok' | 'unavailable' | 'no workers polling';

export interface Readiness {
  ready: boolean;
  body: { status: 'ready' | 'not_ready'; checks: Record<string, CheckResult> };
}

/** A task queue a worker must poll, for its workflow tasks or (a worker of activities only) its activity tasks. */
export interface PolledQueue {
  name: string;
  tasks: 'workflow' | 'activity';
}

const { TaskQueueType } = proto.temporal.api.enums.v1;

/** PostgreSQL answers `select 1`; Temporal answers and a worker polls each of `taskQueues`. */
export async function readiness(deps: {
  /** Absent: a process without a database (the carrier simulator) is not checked for one. */
  orm: Orm | undefined;
  temporal: () => Promise<Client>;
  namespace: string;
  taskQueues: PolledQueue[];
  /** More dependencies of this process, by name (the media gateway's speech). */
  more?: Record<string, () => Promise<CheckResult>>;
}): Promise<Readiness> {
  const { orm } = deps;
  const more = Object.entries(deps.more ?? {});
  const [database, workers, ...moreResults] = await Promise.all([
    orm
      ? check(async () => {
          await orm.em.getConnection().execute('select 1');
          return 'ok';
        })
      : undefined,
    check(async () => {
      const client = await deps.temporal();
      const polled = await Promise.all(
        deps.taskQueues.map(async ({ name, tasks }) => {
          const answer = await client.workflowService.describeTaskQueue({
            namespace: deps.namespace,
            taskQueue: { name },
            taskQueueType:
              tasks === 'workflow'
                ? TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW
                : TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
          });
          return (answer.pollers?.length ?? 0) > 0;
        }),
      );
      return polled.every(Boolean) ? 'ok' : 'no workers polling';
    }),
    ...more.map(([, probe]) => check(probe)),
  ]);
  // Temporal answered when the task queues could be described at all.
  const checks: Record<string, CheckResult> = {
    ...(database ? { database } : {}),
    temporal: workers === 'unavailable' ? 'unavailable' : 'ok',
    workers: workers!,
    ...Object.fromEntries(more.map(([name], i) => [name, moreResults[i]!])),
  };
  const ready = Object.values(checks).every((result) => result === 'ok');
  return { ready, body: { status: ready ? 'ready' : 'not_ready', checks } };
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
