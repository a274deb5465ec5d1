import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type CallingWindow, Campaign, type CampaignRetry } from '../../db/entities/index.js';
import { insertRecipients, type NewRecipient } from './campaign-recipients.js';

/** A new campaign as its creator settled it (every default applied). */
export interface CampaignToCreate {
  agentId: string;
  name: string;
  from: string | null;
  startAt: Date | null;
  timezone: string;
  windows: CallingWindow[];
  maxConcurrentCalls: number;
  retry: CampaignRetry;
  firstMessage: string | null;
  metadata: Record<string, string>;
  recipients: NewRecipient[];
}

/**
 * The campaign and its recipients, in the caller's transaction: `scheduled` while its start_at
 * is ahead, else `running` (its workflow, started next, takes it from there).
 */
export async function createCampaign(
  em: EntityManager,
  workspaceId: string,
  input: CampaignToCreate,
  now = new Date(),
): Promise<Campaign> {
  const { recipients, agentId, from, ...settings } = input;
  const campaign = em.create(Campaign, {
    id: randomUUID(),
    workspace: workspaceId,
    agent: agentId,
    fromNumber: from,
    status: settings.startAt && settings.startAt > now ? 'scheduled' : 'running',
    pausedReason: null,
    ...settings,
    completedEventId: null,
    createdAt: now,
    startedAt: null,
    endedAt: null,
  });
  await em.flush();
  await insertRecipients(em, campaign.id, recipients, 0);
  return campaign;
}
