import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

// What the chaos run reads straight from the service's database to judge a scenario: calls with
// their Idempotency-Key (`metadata.key`), events, transcript lines and webhook deliveries of one
// workspace. Reads retry while PostgreSQL is down (the run restarts it on purpose).

export interface CallRow {
  id: string;
  status: string;
  end_reason: string | null;
  to_number: string | null;
  key: string | null;
  answered: boolean;
  transferred_to: string | null;
}

export interface EventRow {
  id: string;
  call_id: string | null;
  type: string;
}

export interface DeliveryRow {
  event_id: string;
  status: string;
  attempts: number;
  error: string | null;
  next_attempt_at: Date | null;
}

export const FINAL_STATUSES = ['completed', 'failed'];

export class Database {
  private readonly pool: pg.Pool;

  constructor(url: string) {
    this.pool = new pg.Pool({ connectionString: url, max: 3, connectionTimeoutMillis: 5_000 });
    // A restart cuts idle connections; the pool drops them and the next query reconnects.
    this.pool.on('error', () => {});
  }

  async query<T extends pg.QueryResultRow>(
    sql: string,
    params: unknown[] = [],
    budgetMs = 120_000,
  ): Promise<T[]> {
    const deadline = Date.now() + budgetMs;
    for (;;) {
      try {
        return (await this.pool.query<T>(sql, params)).rows;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await sleep(500);
      }
    }
  }

  calls(workspaceId: string): Promise<CallRow[]> {
    return this.query<CallRow>(
      `select id, status, end_reason, to_number, metadata->>'key' as key, answered_at is not null as answered,
              transferred_to
         from calls where workspace_id = $1`,
      [workspaceId],
    );
  }

  async notFinal(workspaceId: string): Promise<number> {
    const [row] = await this.query<{ n: string }>(
      'select count(*) as n from calls where workspace_id = $1 and status <> all($2)',
      [workspaceId, FINAL_STATUSES],
    );
    return Number(row.n);
  }

  events(workspaceId: string): Promise<EventRow[]> {
    return this.query<EventRow>('select id, call_id, type from events where workspace_id = $1', [
      workspaceId,
    ]);
  }

  /**
   * Lines stored twice: a caller line (the simulated people never repeat one within a call) found
   * more than once, or any line right after the same line by the same speaker. The scripted agent
   * may say the same sentence twice in one call, but never twice in a row.
   */
  transcriptDoubles(
    workspaceId: string,
  ): Promise<{ call_id: string; role: string; text: string; n: number }[]> {
    return this.query(
      `select t.call_id, t.role, t.text, count(*)::int as n
         from transcript_entries t join calls c on c.id = t.call_id
        where c.workspace_id = $1 and t.role = 'caller'
        group by t.call_id, t.role, t.text having count(*) > 1
       union all
       select t.call_id, t.role, t.text, 2 as n
         from transcript_entries t
         join transcript_entries u on u.call_id = t.call_id and u.index = t.index + 1
                                  and u.role = t.role and u.text = t.text
         join calls c on c.id = t.call_id
        where c.workspace_id = $1 and t.role = 'agent'`,
      [workspaceId],
    );
  }

  /** Calls whose transcript indexes are not 0..n-1 (a line lost in between). */
  transcriptGaps(workspaceId: string): Promise<{ call_id: string; lines: number; last_index: number }[]> {
    return this.query(
      `select t.call_id, count(*)::int as lines, max(t.index)::int as last_index
         from transcript_entries t join calls c on c.id = t.call_id
        where c.workspace_id = $1
        group by t.call_id having count(*) <> max(t.index) + 1 or min(t.index) <> 0`,
      [workspaceId],
    );
  }

  deliveries(endpointId: string): Promise<DeliveryRow[]> {
    return this.query<DeliveryRow>(
      'select event_id, status, attempts, error, next_attempt_at from webhook_deliveries where endpoint_id = $1',
      [endpointId],
    );
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
