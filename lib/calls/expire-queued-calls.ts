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

/** How many expired calls one sweep ends at most; the next sweep takes the rest. */
const SWEEP_LIMIT = 100;

/** Ends outbound calls queued longer than STALE_QUEUED_SECONDS that have no workflow. */
export async function expireStaleQueuedCalls(
  em: EntityManager,
  client: Client,
  settings: Pick<Settings, 'taskQueuePrefix'>,
  logger: Logger,
  now = new Date(),
): Promise<string[]> {
  const calls = await em.find(
    Call,
    {
      status: 'queued',
      direction: 'outbound',
      startedAt: { $lt: new Date(now.getTime() - STALE_QUEUED_SECONDS * 1000) },
    },
    { orderBy: { startedAt: 'asc' }, limit: SWEEP_LIMIT },
  );
  const expired: string[] = [];
  for (const call of calls) {
    try {
      await startCallWorkflow(client, settings, call, { expired: true });
      expired.push(call.id);
      logger.warn('queued call expired: its workflow never started', { call_id: call.id });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
  return expired;
}
