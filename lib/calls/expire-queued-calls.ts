import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { Call } from '../../db/entities/index.js';
import type { Logger } from '../logger.js';
import type { Settings } from '../settings.js';
import { STALE_QUEUED_SECONDS } from './call-limits.js';
import { startCallWorkflow } from './start-call-workflow.js';

// A call is admitted (its row committed) before its workflow starts. When the start never
// happens (the API process died in between, or Temporal did not confirm it and the client
// never retried its Idempotency-Key), the call would stay `queued` for ever. The calls worker
// looks for such calls and ends them `failed`/`not_connected` through their own workflow, started
// with `expired: true`: it dials nothing, marks the call and sends `call.failed` once. The
// workflow id is the call's, so whichever start comes first wins: a late retry of the key finds
// the workflow started and replays its answer; a call whose workflow exists is never touched.
// Nobody is dialed minutes after the request, when the integrator may have given up on it.

/** Calls read per query; the sweep pages on through every stale queued call. */
export const SWEEP_PAGE_SIZE = 100;

/**
 * Ends outbound calls queued longer than STALE_QUEUED_SECONDS that have no workflow. It pages
 * through all of them, oldest first (keyset on started_at, id): calls whose workflow exists (their
 * start is refused, they are passed over) can be any number, and must not hide newer orphans.
 */
export async function expireStaleQueuedCalls(
  em: EntityManager,
  client: Client,
  settings: Pick<Settings, 'taskQueuePrefix'>,
  logger: Logger,
  now = new Date(),
): Promise<string[]> {
  const staleBefore = new Date(now.getTime() - STALE_QUEUED_SECONDS * 1000);
  const expired: string[] = [];
  let after: Pick<Call, 'startedAt' | 'id'> | undefined;
  for (;;) {
    const calls = await em.find(
      Call,
      {
        status: 'queued',
        direction: 'outbound',
        startedAt: { $lt: staleBefore },
        ...(after
          ? {
              $or: [
                { startedAt: { $gt: after.startedAt } },
                { startedAt: after.startedAt, id: { $gt: after.id } },
              ],
            }
          : {}),
      },
      { orderBy: { startedAt: 'asc', id: 'asc' }, limit: SWEEP_PAGE_SIZE },
    );
    for (const call of calls) {
      if (await expireWithoutWorkflow(client, settings, call)) {
        expired.push(call.id);
        logger.warn('queued call expired: its workflow never started', { call_id: call.id });
      }
    }
    if (calls.length < SWEEP_PAGE_SIZE) return expired;
    after = calls.at(-1);
    em.clear();
  }
}

/** Starts the call's workflow to end it; false when its workflow already exists (it is not an orphan). */
async function expireWithoutWorkflow(
  client: Client,
  settings: Pick<Settings, 'taskQueuePrefix'>,
  call: Call,
): Promise<boolean> {
  try {
    await startCallWorkflow(client, settings, call, { expired: true });
    return true;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw error;
  }
}
