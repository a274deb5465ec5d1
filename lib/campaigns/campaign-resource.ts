import type { EntityManager } from '@mikro-orm/postgresql';
import type {
  CallingWindow,
  Campaign,
  CampaignPausedReason,
  CampaignRecipient,
  CampaignRetry,
  CampaignStatus,
  RecipientStatus,
} from '../../db/entities/index.js';
import type { CampaignCounts } from '../temporal/campaign-messages.js';
import { windowStartAtOrAfter } from './calling-windows.js';

// The Campaign and Recipient resources as the API (and the campaign.completed event) show them
// (spec campaigns-v1: Campaign, Recipient).

export interface CampaignResource {
  object: 'campaign';
  id: string;
  name: string;
  agent_id: string;
  from: string | null;
  status: CampaignStatus;
  paused_reason: CampaignPausedReason | null;
  schedule: { start_at: string | null; timezone: string; windows: CallingWindow[] };
  max_concurrent_calls: number;
  retry: CampaignRetry;
  first_message: string | null;
  metadata: Record<string, string>;
  counts: CampaignCounts;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
}

export interface RecipientResource {
  object: 'campaign_recipient';
  id: string;
  to: string;
  metadata: Record<string, string>;
  status: RecipientStatus;
  attempts: number;
  call_ids: string[];
  last_end_reason: string | null;
  next_attempt_at: string | null;
}

const iso = (at: Date | null | undefined) => (at ? at.toISOString() : null);

export function presentCampaign(campaign: Campaign, counts: CampaignCounts): CampaignResource {
  return {
    object: 'campaign',
    id: campaign.id,
    name: campaign.name,
    agent_id: campaign.agent,
    from: campaign.fromNumber ?? null,
    status: campaign.status,
    paused_reason: campaign.status === 'paused' ? (campaign.pausedReason ?? null) : null,
    schedule: { start_at: iso(campaign.startAt), timezone: campaign.timezone, windows: campaign.windows },
    max_concurrent_calls: campaign.maxConcurrentCalls,
    retry: campaign.retry,
    first_message: campaign.firstMessage ?? null,
    metadata: campaign.metadata,
    counts,
    created_at: campaign.createdAt.toISOString(),
    started_at: iso(campaign.startedAt),
    ended_at: iso(campaign.endedAt),
  };
}

/**
 * `next_attempt_at`: for a pending recipient of a campaign that will call it without anyone's
 * help (scheduled or running), the earliest of now, its retry delay and the start, moved into
 * the next window. Null otherwise (not pending, or the campaign is paused or over).
 */
export function nextAttemptAt(recipient: CampaignRecipient, campaign: Campaign, now: Date): Date | null {
  if (recipient.status !== 'pending') return null;
  if (campaign.status !== 'running' && campaign.status !== 'scheduled') return null;
  const earliest = Math.max(
    now.getTime(),
    recipient.retryAt?.getTime() ?? 0,
    campaign.startAt?.getTime() ?? 0,
  );
  return windowStartAtOrAfter(new Date(earliest), campaign.timezone, campaign.windows);
}

export function presentRecipient(
  recipient: CampaignRecipient,
  campaign: Campaign,
  now = new Date(),
): RecipientResource {
  return {
    object: 'campaign_recipient',
    id: recipient.id,
    to: recipient.toNumber,
    metadata: recipient.metadata,
    status: recipient.status,
    attempts: recipient.attempts,
    call_ids: recipient.callIds,
    last_end_reason: recipient.lastEndReason ?? null,
    next_attempt_at: iso(nextAttemptAt(recipient, campaign, now)),
  };
}

/** Recipients in each state, counted in one query (the (campaign, status, position) index). */
export async function countRecipients(em: EntityManager, campaignId: string): Promise<CampaignCounts> {
  const rows = await em
    .getConnection()
    .execute<{ status: RecipientStatus; n: string }[]>(
      'select status, count(*) as n from campaign_recipients where campaign_id = ? group by status',
      [campaignId],
      'all',
      em.getTransactionContext(),
    );
  const counts: CampaignCounts = {
    total: 0,
    pending: 0,
    in_progress: 0,
    completed: 0,
    failed: 0,
    canceled: 0,
  };
  for (const row of rows) {
    counts[row.status] = Number(row.n);
    counts.total += Number(row.n);
  }
  return counts;
}

/** Counts of many campaigns at once (lists). */
export async function countRecipientsOf(
  em: EntityManager,
  campaignIds: string[],
): Promise<Map<string, CampaignCounts>> {
  const result = new Map<string, CampaignCounts>();
  for (const id of campaignIds) {
    result.set(id, { total: 0, pending: 0, in_progress: 0, completed: 0, failed: 0, canceled: 0 });
  }
  if (campaignIds.length === 0) return result;
  const rows = await em
    .getConnection()
    .execute<{ campaign_id: string; status: RecipientStatus; n: string }[]>(
      `select campaign_id, status, count(*) as n from campaign_recipients
        where campaign_id in (${campaignIds.map(() => '?').join(', ')}) group by campaign_id, status`,
      campaignIds,
    );
  for (const row of rows) {
    const counts = result.get(row.campaign_id)!;
    counts[row.status] = Number(row.n);
    counts.total += Number(row.n);
  }
  return result;
}
