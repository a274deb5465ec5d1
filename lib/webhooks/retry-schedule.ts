// The delivery retry schedule, in one place. Imported by the delivery workflow, so it must
// stay free of I/O and non-deterministic calls.

/** Attempts in all, the first included. */
export const MAX_DELIVERY_ATTEMPTS = 5;

/** Wait after failed attempt n (index n-1) before attempt n+1: 30 s, 2 min, 10 min, 1 h. */
export const RETRY_DELAYS_MS = [30_000, 2 * 60_000, 10 * 60_000, 60 * 60_000] as const;

/** An endpoint whose every delivery attempt has failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 60 * 60_000;

/**
 * Wait before trying again when the endpoint already had its fill of requests in flight (no
 * attempt used): 2 s, doubling up to 30 s, so a backlog to a slow receiver polls gently.
 */
export function busyPauseMs(timesBusy: number): number {
  return Math.min(2_000 * 2 ** (timesBusy - 1), 30_000);
}

/** Wait before the next attempt, or null when `attempt` was the last one. */
export function retryDelayAfter(attempt: number): number | null {
  return attempt < MAX_DELIVERY_ATTEMPTS ? (RETRY_DELAYS_MS[attempt - 1] ?? null) : null;
}

/**
 * The pace of a recovery (POST /webhooks/{id}/recover): one event every RECOVERY_SEND_INTERVAL_MS,
 * i.e. 10 per second (36,000 an hour), oldest first, so a receiver that has just come back is not
 * flooded with days of backlog at once. Events are read RECOVERY_BATCH_SIZE at a time.
 */
export const RECOVERY_SEND_INTERVAL_MS = 100;
export const RECOVERY_EVENTS_PER_SECOND = 1_000 / RECOVERY_SEND_INTERVAL_MS;
export const RECOVERY_BATCH_SIZE = 10;

/** Batches one run of the recovery workflow sends before it continues as new (bounds its history). */
export const RECOVERY_BATCHES_PER_RUN = 100;
