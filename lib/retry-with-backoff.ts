// One step retried in process, with a backoff that doubles up to a ceiling and a budget for all
// attempts: what the media gateway does where no Temporal retry policy can (its turns, its
// signals to the call workflow).

export interface BackoffRetry {
  /** The first wait; each next one doubles, up to `maxMs`. */
  firstMs: number;
  maxMs: number;
  /** No attempt starts after this long since the first. */
  budgetMs: number;
  /**
   * After a failed attempt: how long to wait before the next (at least the backoff it is given),
   * or null to give up at once (the error is thrown).
   */
  waitAfter(error: unknown, backoffMs: number): number | null;
  /** Told before each wait (for the log). */
  onRetry?(error: unknown, attempt: number, waitMs: number): void;
  sleep?: (ms: number) => Promise<void>;
}

/** `step` until it succeeds; the last error once `waitAfter` gives up or the budget would be passed. */
export async function retryWithBackoff<T>(
  step: (attempt: number) => Promise<T>,
  retry: BackoffRetry,
): Promise<T> {
  const sleep = retry.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const giveUpAt = Date.now() + retry.budgetMs;
  for (let attempt = 1, backoff = retry.firstMs; ; attempt++) {
    try {
      return await step(attempt);
    } catch (error) {
      const wait = retry.waitAfter(error, backoff);
      if (wait === null || Date.now() + wait > giveUpAt) throw error;
      retry.onRetry?.(error, attempt, wait);
      await sleep(wait);
      backoff = Math.min(backoff * 2, retry.maxMs);
    }
  }
}
