import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Campaign, type CampaignPausedReason, type CampaignStatus } from '../../db/entities/index.js';

// A campaign's state machine (docs/campaigns.md): which status each move starts from and what it
// changes. The API's moves (pause, resume, cancel, more recipients) and the campaign workflow's
// (start, pause on quota or agent, completion) both go through these, each on the row locked by
// lockCampaign, so neither can undo the other.

export type CampaignMove = 'start' | 'pause' | 'resume' | 'cancel' | 'add_recipients' | 'complete';

/** The statuses each move starts from. */
const MOVES_FROM: Record<CampaignMove, CampaignStatus[]> = {
  start: ['scheduled'],
  pause: ['running'],
  resume: ['paused'],
  cancel: ['scheduled', 'running', 'paused'],
  add_recipients: ['scheduled', 'running', 'paused'],
  complete: ['running'],
};

/** How a refusal names the move: "A completed campaign cannot be paused." */
const MOVE_WORDS: Record<CampaignMove, string> = {
  start: 'started',
  pause: 'paused',
  resume: 'resumed',
  cancel: 'canceled',
  add_recipients: 'given more recipients',
  complete: 'completed',
};

export type CampaignMoveRefusal = { code: 'campaign_state_invalid'; message: string };

/** The campaign's row, locked for the caller's transaction (null when it is gone). */
export function lockCampaign(em: EntityManager, where: { id: string; workspace?: string }) {
  return em.findOne(Campaign, where, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

/** Null when the campaign's status allows the move. */
export function campaignMoveRefusal(campaign: Campaign, move: CampaignMove): CampaignMoveRefusal | null {
  if (MOVES_FROM[move].includes(campaign.status)) return null;
  return {
    code: 'campaign_state_invalid',
    message: `A ${campaign.status} campaign cannot be ${MOVE_WORDS[move]}.`,
  };
}

/** scheduled → running. */
export function startCampaign(campaign: Campaign): CampaignMoveRefusal | null {
  const refusal = campaignMoveRefusal(campaign, 'start');
  if (!refusal) campaign.status = 'running';
  return refusal;
}

/** running → paused, saying why (`requested` by the API, else the workflow's reason). */
export function pauseCampaign(campaign: Campaign, reason: CampaignPausedReason): CampaignMoveRefusal | null {
  const refusal = campaignMoveRefusal(campaign, 'pause');
  if (refusal) return refusal;
  campaign.status = 'paused';
  campaign.pausedReason = reason;
  return null;
}

/** paused → running. */
export function resumeCampaign(campaign: Campaign): CampaignMoveRefusal | null {
  const refusal = campaignMoveRefusal(campaign, 'resume');
  if (refusal) return refusal;
  campaign.status = 'running';
  campaign.pausedReason = null;
  return null;
}

/** → canceled, with every pending recipient; live calls go on to their end. */
export async function cancelCampaign(
  em: EntityManager,
  campaign: Campaign,
  now: Date,
): Promise<CampaignMoveRefusal | null> {
  const refusal = campaignMoveRefusal(campaign, 'cancel');
  if (refusal) return refusal;
  campaign.status = 'canceled';
  campaign.pausedReason = null;
  campaign.endedAt = now;
  await em
    .getConnection()
    .execute(
      "update campaign_recipients set status = 'canceled', retry_at = null where campaign_id = ? and status = 'pending'",
      [campaign.id],
      'run',
      em.getTransactionContext(),
    );
  return null;
}
