import type { EntityManager } from '@mikro-orm/postgresql';
import type { CallDirection, Workspace } from '../../db/entities/index.js';

// The workspace's call limits (settable with `admin limits set`), checked inside the admitting
// transaction after lockWorkspaceCalls() (admit-to-workspace.ts), so processes running side by
// side see each other's inserts and never let two calls through one free slot.

export type LimitRefusal =
  | { code: 'call_rate_limited'; retryAfterSeconds: number }
  | { code: 'call_daily_limit'; retryAfterSeconds: number }
  | { code: 'quota_exceeded'; retryAfterSeconds: number };

/** Serialises call admission per workspace until the transaction ends (a transaction-scoped advisory lock). */
export async function lockWorkspaceCalls(em: EntityManager, workspaceId: string): Promise<void> {
  await em
    .getConnection()
    .execute(
      "select pg_advisory_xact_lock(hashtextextended('calls:' || ?, 0))",
      [workspaceId],
      'all',
      em.getTransactionContext(),
    );
}

export function startOfUtcDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}

export function startOfUtcMonth(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

export function startOfNextUtcMonth(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/** Call minutes: the seconds of all calls added up, rounded up to whole minutes. */
export function minutesOf(totalSeconds: number): number {
  return Math.ceil(totalSeconds / 60);
}

/**
 * The first limit the workspace is at for a call of `direction`, or null when it may start now:
 * - calls_per_minute: outbound calls started in the last 60 s (sliding window), outbound only;
 * - calls_per_day: outbound calls started since 00:00 UTC, outbound only;
 * - minutes_quota: call minutes (both directions) of calls started this calendar month, UTC.
 */
export async function checkCallLimits(
  em: EntityManager,
  workspace: Workspace,
  direction: CallDirection,
  now: Date,
): Promise<LimitRefusal | null> {
  const minuteAgo = new Date(now.getTime() - 60_000);
  const day = startOfUtcDay(now);
  const month = startOfUtcMonth(now);
  const [row] = await em
    .getConnection()
    .execute<{ last_minute: string; oldest_in_minute: Date | null; today: string; month_seconds: string }[]>(
      `select count(*) filter (where direction = 'outbound' and started_at > ?) as last_minute,
            min(started_at) filter (where direction = 'outbound' and started_at > ?) as oldest_in_minute,
            count(*) filter (where direction = 'outbound' and started_at >= ?) as today,
            coalesce(sum(duration_seconds) filter (where started_at >= ?), 0) as month_seconds
       from calls
      where workspace_id = ? and started_at >= ?`,
      [
        minuteAgo,
        minuteAgo,
        day,
        month,
        workspace.id,
        new Date(Math.min(minuteAgo.getTime(), month.getTime(), day.getTime())),
      ],
      'all',
      em.getTransactionContext(),
    );
  const dialing = direction === 'outbound';
  if (dialing && Number(row.last_minute) >= workspace.callsPerMinute) {
    // `now` was read before this request waited for the workspace's lock, so a call another process
    // admitted meanwhile may have started after it: a slot never frees later than a minute from now.
    const oldest = Math.min(
      row.oldest_in_minute ? new Date(row.oldest_in_minute).getTime() : now.getTime(),
      now.getTime(),
    );
    return { code: 'call_rate_limited', retryAfterSeconds: (oldest + 60_000 - now.getTime()) / 1000 };
  }
  if (dialing && Number(row.today) >= workspace.callsPerDay) {
    return {
      code: 'call_daily_limit',
      retryAfterSeconds: (day.getTime() + 86_400_000 - now.getTime()) / 1000,
    };
  }
  if (minutesOf(Number(row.month_seconds)) >= workspace.minutesQuota) {
    return {
      code: 'quota_exceeded',
      retryAfterSeconds: (startOfNextUtcMonth(now).getTime() - now.getTime()) / 1000,
    };
  }
  return null;
}

/** A queued call older than this never got its workflow started (see POST /calls 503); it no longer holds the trial line. */
export const STALE_QUEUED_SECONDS = 120;

/** The trial plan's one line: is a call of the workspace still on it (queued, ringing or talking)? */
export async function hasCallOnTheLine(em: EntityManager, workspaceId: string, now: Date): Promise<boolean> {
  const [row] = await em.getConnection().execute<{ busy: boolean }[]>(
    `select exists (
       select 1 from calls
        where workspace_id = ? and ended_at is null
          and (status in ('ringing', 'in_progress') or (status = 'queued' and started_at > ?))
     ) as busy`,
    [workspaceId, new Date(now.getTime() - STALE_QUEUED_SECONDS * 1000)],
    'all',
    em.getTransactionContext(),
  );
  return row.busy;
}
