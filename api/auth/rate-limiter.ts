import type { Orm } from '../../db/orm.js';
import type { Logger } from '../../lib/logger.js';

// Requests per second per API key, shared by every API process through rate_limit_windows
// (one row per key and one-second window). To keep the hot path free of a database round trip,
// each process counts locally and flushes its increments every FLUSH_INTERVAL_MS in one
// statement, learning the global count in return. The first request of a key in a window
// waits for that flush, so a process always starts a window knowing what others counted.
// Overshoot is bounded: at most what the other processes accepted in one flush interval.
// If the database cannot be reached the limiter fails open (requests pass, a warning is logged).

export const FLUSH_INTERVAL_MS = 20;
const CLEANUP_INTERVAL_MS = 10_000;
const KEEP_WINDOWS_SECONDS = 60;

interface Bucket {
  window: number;
  /** Global count for the window at the last flush (this process's own flushed requests included). */
  known: number;
  /** Accepted here, not yet flushed. */
  pending: number;
  /** Accepted here, being written by the flush in progress. */
  writing: number;
  /** Resolves when the window's first flush is done. */
  synced?: Promise<void>;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private lastCleanup = 0;

  constructor(
    private readonly orm: Orm,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request for `bucket` against `limit` per second. */
  async take(bucket: string, limit: number): Promise<RateDecision> {
    const nowMs = this.now();
    const window = Math.floor(nowMs / 1000);
    let state = this.buckets.get(bucket);
    if (!state || state.window !== window) {
      state = { window, known: 0, pending: 0, writing: 0 };
      this.buckets.set(bucket, state);
      state.pending++;
      state.synced = this.flush();
      await state.synced;
      // Another process may have filled the window already: this request counts either way.
      return state.known > limit ? this.refuse(nowMs, window) : { allowed: true };
    }
    if (state.synced) await state.synced;
    if (state.known + state.writing + state.pending >= limit) return this.refuse(nowMs, window);
    state.pending++;
    this.schedule();
    return { allowed: true };
  }

  private refuse(nowMs: number, window: number): RateDecision {
    return {
      allowed: false,
      retryAfterSeconds: Math.max(1, Math.ceil(((window + 1) * 1000 - nowMs) / 1000)),
    };
  }

  private schedule() {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  /** Writes every pending increment in one statement; resolves when the counts are known. */
  async flush(): Promise<void> {
    // One flush at a time; a caller arriving mid-flush waits, then flushes what is left.
    while (this.flushing) await this.flushing;
    const batch = [...this.buckets.entries()].filter(([, s]) => s.pending > 0);
    if (batch.length === 0) return;
    this.flushing = this.write(batch).finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  private async write(batch: [string, Bucket][]) {
    const taken = batch.map(([name, state]) => ({ name, state, count: state.pending }));
    for (const t of taken) {
      t.state.pending -= t.count;
      t.state.writing += t.count;
    }
    try {
      const rows = await this.orm.em.getConnection().execute<{ bucket: string; count: number }[]>(
        `insert into rate_limit_windows (bucket, window_start, count)
         select bucket, window_start, count
           from jsonb_to_recordset(?::jsonb) as t(bucket text, window_start bigint, count int)
         on conflict (bucket, window_start) do update set count = rate_limit_windows.count + excluded.count
         returning bucket, count`,
        [
          JSON.stringify(
            taken.map((t) => ({ bucket: t.name, window_start: t.state.window, count: t.count })),
          ),
        ],
        'all',
      );
      const counts = new Map(rows.map((r) => [r.bucket, Number(r.count)]));
      for (const t of taken) {
        t.state.writing -= t.count;
        t.state.known = counts.get(t.name) ?? t.state.known + t.count;
      }
    } catch (error) {
      for (const t of taken) {
        t.state.writing -= t.count;
        t.state.known += t.count;
      }
      this.logger.warn('rate limit counts could not be written; limiting on local counts', { error });
      return;
    }
    await this.cleanup().catch((error) => this.logger.warn('old rate limit windows not deleted', { error }));
  }

  private async cleanup() {
    const nowMs = this.now();
    if (nowMs - this.lastCleanup < CLEANUP_INTERVAL_MS) return;
    this.lastCleanup = nowMs;
    const oldest = Math.floor(nowMs / 1000) - KEEP_WINDOWS_SECONDS;
    await this.orm.em
      .getConnection()
      .execute('delete from rate_limit_windows where window_start < ?', [oldest], 'run');
    for (const [name, state] of this.buckets) if (state.window < oldest) this.buckets.delete(name);
  }

  /** Flushes what is pending and stops the timer (at shutdown). */
  async close() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
