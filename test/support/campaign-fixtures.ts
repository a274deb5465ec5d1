import { randomUUID } from 'node:crypto';
import {
  Call,
  type CallingWindow,
  Campaign,
  CampaignRecipient,
  type CampaignRetry,
  type CampaignStatus,
} from '../../db/entities/index.js';
import type { Orm } from '../../db/orm.js';

// Campaign rows for the time-skipping workflow tests, written as POST /campaigns writes them
// (api/routes/campaigns.ts), and readers of what the campaign did.

export interface CampaignFixtureOptions {
  workspaceId: string;
  agentId: string;
  recipients: string[];
  startAt?: Date | null;
  timezone?: string;
  windows?: CallingWindow[];
  maxConcurrentCalls?: number;
  retry?: Partial<CampaignRetry>;
  /** Workflow time now (the time-skipping server's clock), to tell scheduled from running. */
  now: Date;
}

export async function createCampaignRows(orm: Orm, options: CampaignFixtureOptions): Promise<Campaign> {
  const em = orm.em.fork();
  const startAt = options.startAt ?? null;
  const status: CampaignStatus = startAt && startAt > options.now ? 'scheduled' : 'running';
  const campaign = em.create(Campaign, {
    id: randomUUID(),
    workspace: options.workspaceId,
    agent: options.agentId,
    name: 'Test campaign',
    fromNumber: null,
    status,
    pausedReason: null,
    startAt,
    timezone: options.timezone ?? 'UTC',
    windows: options.windows ?? [],
    maxConcurrentCalls: options.maxConcurrentCalls ?? 5,
    retry: { max_attempts: 2, delay_minutes: 60, on: ['no_answer', 'busy'], ...options.retry },
    firstMessage: null,
    metadata: {},
    completedEventId: null,
    createdAt: options.now,
    startedAt: null,
    endedAt: null,
  });
  await em.flush();
  // Plain inserts, 500 rows a statement: thousands of recipients in a moment.
  for (let start = 0; start < options.recipients.length; start += 500) {
    const chunk = options.recipients.slice(start, start + 500);
    await em.getConnection().execute(
      `insert into campaign_recipients
         (id, campaign_id, position, to_number, metadata, status, attempts, call_ids, created_at)
       values ${chunk.map(() => "(?, ?, ?, ?, '{}'::jsonb, 'pending', 0, '[]'::jsonb, now())").join(', ')}`,
      chunk.flatMap((to, i) => [randomUUID(), campaign.id, start + i, to]),
    );
  }
  return campaign;
}

export async function recipientsOf(orm: Orm, campaignId: string): Promise<CampaignRecipient[]> {
  return orm.em.fork().find(CampaignRecipient, { campaign: campaignId }, { orderBy: { position: 'asc' } });
}

export async function callsOf(orm: Orm, campaignId: string): Promise<Call[]> {
  return orm.em.fork().find(Call, { campaign: campaignId }, { orderBy: { startedAt: 'asc' } });
}

export async function campaignRow(orm: Orm, campaignId: string): Promise<Campaign> {
  return orm.em.fork().findOneOrFail(Campaign, { id: campaignId });
}

/**
 * The most calls of the campaign live at one moment: each call from its start until its end
 * (a new one may start only after a live one is final, which is later still).
 */
export function maxLiveCalls(calls: readonly Call[]): number {
  const edges: [number, number][] = [];
  for (const call of calls) {
    edges.push([call.startedAt.getTime(), 1]);
    edges.push([(call.endedAt ?? new Date(8.64e15)).getTime(), -1]);
  }
  // At equal times an end comes before a start: the slot is free again.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let live = 0;
  let max = 0;
  for (const [, delta] of edges) {
    live += delta;
    max = Math.max(max, live);
  }
  return max;
}
