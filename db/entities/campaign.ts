import { defineEntity, p } from '@mikro-orm/core';
import { Agent } from './agent.js';
import { Workspace } from './workspace.js';

export const CAMPAIGN_STATUSES = ['scheduled', 'running', 'paused', 'completed', 'canceled'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];
export type CampaignPausedReason = 'requested' | 'quota_exceeded' | 'agent_unavailable';
export type CampaignDay = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';
export type RetryableEndReason = 'no_answer' | 'busy' | 'not_connected';

/** One calling window: these days, from `start` to `end` (`HH:MM`) in the campaign's timezone. */
export interface CallingWindow {
  days: CampaignDay[];
  start: string;
  end: string;
}

export interface CampaignRetry {
  max_attempts: number;
  delay_minutes: number;
  on: RetryableEndReason[];
}

/**
 * A campaign (docs/campaigns.md). This row is the truth about its state: the API moves it
 * (pause, resume, cancel) and the campaign workflow's activity moves it (start, quota,
 * agent, completion), both under a row lock, so neither can undo the other.
 */
const CampaignSchema = defineEntity({
  name: 'Campaign',
  tableName: 'campaigns',
  indexes: [
    { properties: ['workspace', 'createdAt', 'id'] },
    { properties: ['workspace', 'status', 'createdAt'] },
  ],
  properties: {
    id: p.uuid().primary(),
    workspace: () => p.manyToOne(Workspace).mapToPk().deleteRule('cascade'),
    agent: () => p.manyToOne(Agent).mapToPk().deleteRule('cascade'),
    name: p.string().length(200),
    fromNumber: p.string().length(16).nullable(),
    status: p.string().length(20).$type<CampaignStatus>(),
    pausedReason: p.string().length(40).$type<CampaignPausedReason>().nullable(),
    startAt: p.datetime().nullable(),
    timezone: p.string().length(64),
    windows: p.json().$type<CallingWindow[]>(),
    maxConcurrentCalls: p.integer(),
    retry: p.json().$type<CampaignRetry>(),
    firstMessage: p.text().nullable(),
    metadata: p.json().$type<Record<string, string>>(),
    /** The id of its campaign.completed event, once written (written once). */
    completedEventId: p.string().length(40).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    startedAt: p.datetime().nullable(),
    endedAt: p.datetime().nullable(),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export class Campaign extends CampaignSchema.class {}
CampaignSchema.setClass(Campaign);

export { CampaignSchema };
