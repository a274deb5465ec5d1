import type { EntityManager } from '@mikro-orm/postgresql';
import type { Call, RecipientStatus } from '../../db/entities/index.js';
import {
  type AdmissionRefusal,
  admitOutboundCall,
  type DeploymentRules,
} from '../calls/admit-outbound-call.js';
import { lockCampaign } from './campaign-moves.js';

// A campaign calls a recipient through admitOutboundCall, exactly like POST /calls, in the
// transaction that marks the recipient in_progress under the campaign's row lock: a step
// repeated after a crash never calls anyone twice for one attempt.

export interface RecipientToCall {
  id: string;
  to_number: string;
  metadata: Record<string, string>;
}

export type RecipientCallStart =
  | { started: true; call: Call }
  | { started: false; stop: 'not_running' | 'no_slot' | 'not_pending' }
  | { started: false; stop: 'refused'; refusal: AdmissionRefusal };

/** Pending recipients whose retry (if any) is due at `at`, in the order given, at most `limit`. */
export function dueRecipients(
  em: EntityManager,
  campaignId: string,
  at: Date,
  limit: number,
): Promise<RecipientToCall[]> {
  return em.getConnection().execute<RecipientToCall[]>(
    `select id, to_number, metadata from campaign_recipients
      where campaign_id = ? and status = 'pending' and (retry_at is null or retry_at <= ?)
      order by position limit ?`,
    [campaignId, at, limit],
  );
}

/** The earliest retry of a pending recipient after `at`; null when none waits. */
export async function nextRetryAt(em: EntityManager, campaignId: string, at: Date): Promise<Date | null> {
  const [row] = await em
    .getConnection()
    .execute<{ next: Date | null }[]>(
      "select min(retry_at) as next from campaign_recipients where campaign_id = ? and status = 'pending' and retry_at > ?",
      [campaignId, at],
    );
  return row?.next ? new Date(row.next) : null;
}

/** Admits one recipient's call (its workflow is the caller's to start), stamped `at`. */
export async function startRecipientCall(
  em: EntityManager,
  campaignId: string,
  recipient: RecipientToCall,
  at: Date,
  deployment: DeploymentRules,
): Promise<RecipientCallStart> {
  return em.transactional(async (tx): Promise<RecipientCallStart> => {
    const campaign = await lockCampaign(tx, { id: campaignId });
    if (campaign?.status !== 'running') return { started: false, stop: 'not_running' };
    const connection = tx.getConnection();
    const ctx = tx.getTransactionContext();
    const [{ live }] = await connection.execute<{ live: string }[]>(
      "select count(*) as live from campaign_recipients where campaign_id = ? and status = 'in_progress'",
      [campaignId],
      'all',
      ctx,
    );
    if (Number(live) >= campaign.maxConcurrentCalls) return { started: false, stop: 'no_slot' };
    const [row] = await connection.execute<{ status: RecipientStatus }[]>(
      'select status from campaign_recipients where id = ? for update',
      [recipient.id],
      'all',
      ctx,
    );
    if (row?.status !== 'pending') return { started: false, stop: 'not_pending' };
    const admission = await admitOutboundCall(
      tx,
      campaign.workspace,
      {
        agentId: campaign.agent,
        to: recipient.to_number,
        ...(campaign.fromNumber ? { from: campaign.fromNumber } : {}),
        metadata: { ...campaign.metadata, ...recipient.metadata },
        ...(campaign.firstMessage !== null && campaign.firstMessage !== undefined
          ? { firstMessage: campaign.firstMessage }
          : {}),
        campaignId,
      },
      deployment,
      at,
    );
    if (!admission.admitted) return { started: false, stop: 'refused', refusal: admission.refusal };
    await connection.execute(
      `update campaign_recipients
          set status = 'in_progress', attempts = attempts + 1, call_ids = call_ids || ?::jsonb,
              current_call_id = ?, retry_at = null
        where id = ?`,
      [JSON.stringify([admission.call.id]), admission.call.id, recipient.id],
      'run',
      ctx,
    );
    campaign.startedAt ??= at;
    await tx.flush();
    return { started: true, call: admission.call };
  });
}

/** A recipient whose number may not be called (an emergency number, a destination not allowed) fails at once. */
export async function failRecipient(em: EntityManager, recipientId: string): Promise<void> {
  await em
    .getConnection()
    .execute("update campaign_recipients set status = 'failed' where id = ? and status = 'pending'", [
      recipientId,
    ]);
}
