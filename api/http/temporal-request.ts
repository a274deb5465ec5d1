import type { Client } from '@temporalio/client';
import type { Settings } from '../../lib/settings.js';
import { startOnce } from '../../lib/temporal/start-once.js';
import type { AppDeps } from './route.js';
import { withTimeout } from './with-timeout.js';

// What a request asks of Temporal (a workflow's start, a signal) it asks with one limit, so a
// Temporal server that cannot be reached costs a request at most this long, on every route.

/** How long a request waits for Temporal to confirm a workflow's start or a signal. */
export const TEMPORAL_REQUEST_TIMEOUT_MS = 10_000;

/** Asks Temporal within a request; rejects when it cannot be reached or does not answer in time. */
export async function askTemporal<T>(
  deps: Pick<AppDeps, 'temporal' | 'settings'>,
  ask: (client: Client, settings: Settings) => Promise<T>,
): Promise<T> {
  const client = await deps.temporal();
  return withTimeout(ask(client, deps.settings), TEMPORAL_REQUEST_TIMEOUT_MS);
}

/** Starts a workflow within a request; one already started under its id counts as started. */
export function startWorkflowInRequest(
  deps: Pick<AppDeps, 'temporal' | 'settings'>,
  start: (client: Client, settings: Settings) => Promise<unknown>,
): Promise<void> {
  return askTemporal(deps, (client, settings) => startOnce(start(client, settings)));
}
