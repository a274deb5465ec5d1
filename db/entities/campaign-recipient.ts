import { defineEntity, p } from '@mikro-orm/core';
import { Campaign } from './campaign.js';

export const RECIPIENT_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'canceled'] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

/**
 * One number a campaign calls. Its state lives here, not in the workflow, so a campaign of
 * 100,000 recipients keeps a small workflow history. `position` is the order given (calls start
 * in that order); `retryAt` is the earliest a retry may start by the delay alone (the windows
 * are applied when it is read: next_attempt_at).
 */
const CampaignRecipientSchema = defineEntity({
  name: 'CampaignRecipient',
  tableName: 'campaign_recipients',
  uniques: [{ properties: ['campaign', 'toNumber'] }, { properties: ['campaign', 'position'] }],
  indexes: [{ properties: ['campaign', 'status', 'position'] }],
  properties: {
    id: p.uuid().primary(),
    campaign: () => p.manyToOne(Campaign).mapToPk().deleteRule('cascade'),
    position: p.integer(),
    toNumber: p.string().length(16),
    metadata: p.json().$type<Record<string, string>>(),
    status: p.string().length(20).$type<RecipientStatus>(),
    attempts: p.integer(),
    callIds: p.json().$type<string[]>(),
    /** The live call while `in_progress`, else the last one. */
    currentCallId: p.uuid().nullable(),
    lastEndReason: p.string().length(40).nullable(),
    retryAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export class CampaignRecipient extends CampaignRecipientSchema.class {}
CampaignRecipientSchema.setClass(CampaignRecipient);

export { CampaignRecipientSchema };
