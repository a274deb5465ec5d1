import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';

// A campaign's recipients as rows, in the order given (their position), in the caller's
// transaction: POST /campaigns writes the first ones, POST /campaigns/{id}/recipients more.

export interface NewRecipient {
  to: string;
  metadata?: Record<string, string>;
}

/** Of `numbers`, those that are recipients of the campaign already. */
export async function recipientNumbersTaken(
  em: EntityManager,
  campaignId: string,
  numbers: string[],
): Promise<Set<string>> {
  const rows = await em
    .getConnection()
    .execute<{ to_number: string }[]>(
      `select to_number from campaign_recipients where campaign_id = ? and to_number in (${numbers.map(() => '?').join(', ')})`,
      [campaignId, ...numbers],
      'all',
      em.getTransactionContext(),
    );
  return new Set(rows.map((row) => row.to_number));
}

/** How many recipients the campaign has, and the position after the last. */
export async function recipientTally(
  em: EntityManager,
  campaignId: string,
): Promise<{ count: number; nextPosition: number }> {
  const [{ n, last }] = await em
    .getConnection()
    .execute<{ n: string; last: number | null }[]>(
      'select count(*) as n, max(position) as last from campaign_recipients where campaign_id = ?',
      [campaignId],
      'all',
      em.getTransactionContext(),
    );
  return { count: Number(n), nextPosition: (last ?? -1) + 1 };
}

/** Pending recipients from `firstPosition` on. */
export async function insertRecipients(
  em: EntityManager,
  campaignId: string,
  recipients: NewRecipient[],
  firstPosition: number,
): Promise<void> {
  const now = new Date();
  // One statement per 500 rows keeps the parameter count well under PostgreSQL's limit.
  for (let start = 0; start < recipients.length; start += 500) {
    const chunk = recipients.slice(start, start + 500);
    await em.getConnection().execute(
      `insert into campaign_recipients
         (id, campaign_id, position, to_number, metadata, status, attempts, call_ids, created_at)
       values ${chunk.map(() => "(?, ?, ?, ?, ?::jsonb, 'pending', 0, '[]'::jsonb, ?)").join(', ')}`,
      chunk.flatMap((recipient, i) => [
        randomUUID(),
        campaignId,
        firstPosition + start + i,
        recipient.to,
        JSON.stringify(recipient.metadata ?? {}),
        now,
      ]),
      'run',
      em.getTransactionContext(),
    );
  }
}
