import type { Client } from '@temporalio/client';
import type { Orm } from '../db/orm.js';
import { expireStaleQueuedCalls } from '../lib/calls/expire-queued-calls.js';
import type { Logger } from '../lib/logger.js';
import type { Settings } from '../lib/settings.js';

/** How often a calls worker process looks for calls whose workflow never started. */
export const SWEEP_INTERVAL_MS = 30_000;

/**
 * Runs expireStaleQueuedCalls every SWEEP_INTERVAL_MS in a calls worker process. Several processes
 * may sweep at once: the call's workflow id lets only one of them end each call.
 */
export function startQueuedCallSweeper(deps: {
  orm: Orm;
  client: Client;
  settings: Pick<Settings, 'taskQueuePrefix'>;
  logger: Logger;
  intervalMs?: number;
}): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  const sweep = () => {
    // A sweep pages through every stale queued call, so with a backlog it may outlast the interval:
    // the next one starts only after it.
    if (running) return;
    running = expireStaleQueuedCalls(deps.orm.em.fork(), deps.client, deps.settings, deps.logger)
      .catch((error: unknown) =>
        deps.logger.warn('queued call sweep failed; the next one retries', { error }),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(sweep, deps.intervalMs ?? SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
