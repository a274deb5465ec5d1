import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { Call, type Campaign, FINAL_CALL_STATUSES, type RecipientStatus } from '../../db/entities/index.js';
import { startCallWorkflow } from '../calls/start-call-workflow.js';
import type { Settings } from '../settings.js';
import { startOnce } from '../temporal/start-once.js';
import { lockCampaign } from './campaign-moves.js';

// Step 1 of a campaign's step (lib/campaigns/advance-campaign.ts): recipients whose call has
// ended get their outcome, and calls admitted whose workflow start was lost are started.

/** A recipient's call as it ended. */
export interface EndedCall {
  /** The recipient's attempts so far, this call's included. */
  attempts: number;
  callStatus: string;
  endReason: string | null;
  endedAt: Date | null;
}

export interface RecipientOutcome {
  status: RecipientStatus;
  /** The call's end reason (its status when it has none). */
  reason: string;
  /** When a retry is due (status pending). */
  retryAt: Date | null;
}

/**
 * A completed call completes the recipient, unless an answering machine took it (`voicemail`): an
 * attempt that did not reach them, retried like `no_answer` (telephony spec section 6). An end the
 * campaign retries on, with attempts left, makes it pending again after `retry.delay_minutes`
 * (canceled, in a canceled campaign); any other end fails it.
 */
export function recipientOutcome(
  campaign: Pick<Campaign, 'status' | 'retry'>,
  call: EndedCall,
  now = new Date(),
): RecipientOutcome {
  const reason = call.endReason ?? call.callStatus;
  const machine = reason === 'voicemail';
  if (call.callStatus === 'completed' && !machine) return { status: 'completed', reason, retryAt: null };
  const retriedAs = machine ? 'no_answer' : reason;
  const retried =
    campaign.retry.on.includes(retriedAs as never) && call.attempts < campaign.retry.max_attempts;
  if (!retried) return { status: 'failed', reason, retryAt: null };
  // A retry of a canceled campaign will never come.
  if (campaign.status === 'canceled') return { status: 'canceled', reason, retryAt: null };
  const endedAt = call.endedAt ?? now;
  return {
    status: 'pending',
    reason,
    retryAt: new Date(endedAt.getTime() + campaign.retry.delay_minutes * 60_000),
  };
}

/** Recipients whose live call has become final: their outcome, under the campaign's lock. */
export async function settleEndedCalls(em: EntityManager, campaignId: string): Promise<void> {
  await em.transactional(async (tx) => {
    const campaign = await lockCampaign(tx, { id: campaignId });
    if (!campaign) return;
    const connection = tx.getConnection();
    const ended = await connection.execute<
      {
        id: string;
        attempts: number;
        call_status: string;
        end_reason: string | null;
        ended_at: Date | null;
      }[]
    >(
      `select r.id, r.attempts, c.status as call_status, c.end_reason, c.ended_at
         from campaign_recipients r join calls c on c.id = r.current_call_id
        where r.campaign_id = ? and r.status = 'in_progress'
          and c.status in (${FINAL_CALL_STATUSES.map(() => '?').join(', ')})`,
      [campaignId, ...FINAL_CALL_STATUSES],
      'all',
      tx.getTransactionContext(),
    );
    for (const row of ended) {
      const outcome = recipientOutcome(campaign, {
        attempts: row.attempts,
        callStatus: row.call_status,
        endReason: row.end_reason,
        endedAt: row.ended_at ? new Date(row.ended_at) : null,
      });
      await connection.execute(
        `update campaign_recipients set status = ?, last_end_reason = ?, retry_at = ?
          where id = ? and status = 'in_progress'`,
        [outcome.status, outcome.reason, outcome.retryAt, row.id],
        'run',
        tx.getTransactionContext(),
      );
    }
  });
}

/** Calls admitted by an earlier step whose workflow start was not confirmed: start them (once). */
export async function startLostCalls(
  em: EntityManager,
  client: Client,
  settings: Pick<Settings, 'taskQueuePrefix'>,
  campaignId: string,
): Promise<void> {
  const rows = await em.getConnection().execute<{ id: string }[]>(
    `select c.id from campaign_recipients r join calls c on c.id = r.current_call_id
      where r.campaign_id = ? and r.status = 'in_progress' and c.status = 'queued'`,
    [campaignId],
  );
  if (rows.length === 0) return;
  const queued = await em.find(Call, { id: { $in: rows.map((row) => row.id) } });
  for (const call of queued) await startOnce(startCallWorkflow(client, settings, call));
}
