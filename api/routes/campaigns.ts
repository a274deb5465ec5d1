import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { Campaign, CampaignRecipient, type CampaignStatus } from '../../db/entities/index.js';
import { type AgentRefusal, checkOutboundAgent } from '../../lib/calls/admit-outbound-call.js';
import { isEmergencyNumber } from '../../lib/calls/emergency-numbers.js';
import {
  countRecipients,
  countRecipientsOf,
  presentCampaign,
  presentRecipient,
} from '../../lib/campaigns/campaign-resource.js';
import {
  type CampaignChange,
  signalCampaign,
  startCampaignWorkflow,
} from '../../lib/campaigns/campaign-workflow-client.js';
import {
  type ApiError,
  agentHasNoNumber,
  agentNotPublished,
  campaignRecipientLimit,
  campaignStateInvalid,
  emergencyNumber,
  fromNumberNotAssigned,
  fromNumberRequired,
  parameterInvalid,
  resourceMissing,
  upstreamUnavailable,
} from '../http/errors.js';
import { linksTakingId } from '../http/links.js';
import { listQuerySchema, listSchema, paginate, paginateInOrder } from '../http/pagination.js';
import { type ApiContext, defineRoute, type RouteDefinition } from '../http/route.js';
import { withTimeout } from '../http/with-timeout.js';
import { storeAnswerWithWork } from '../middleware/idempotency.js';
import { METADATA_LIMITS } from '../schemas/call.js';
import {
  CAMPAIGN_DEFAULTS,
  type CampaignCreate,
  campaignCreateSchema,
  campaignListFilters,
  campaignSchema,
  RECIPIENTS_PER_CAMPAIGN,
  type RecipientInput,
  recipientListFilters,
  recipientSchema,
  recipientsAddSchema,
} from '../schemas/campaign.js';
import { uuidParams } from '../schemas/common.js';

// Campaigns (spec campaigns-v1, docs/campaigns.md). The campaign's row is the truth about its
// state: these routes change it in a transaction holding the row's lock, then signal the
// campaign's workflow (`campaign-<id>`) to take its next step. Checks of POST /campaigns, in
// order: the body schema (400, the timezone among them: an enum), what a schema cannot say (400: window start before
// end, `to` unique, merged metadata at most 20 keys), the agent as POST /calls checks it (404,
// 422), then emergency numbers (422 `recipients[i].to`).

/** How long a request waits for Temporal to confirm the workflow start or signal. */
const TEMPORAL_TIMEOUT_MS = 10_000;

const campaignParams = uuidParams('campaign_id');
const missing = { description: 'resource_missing: no such campaign in the workspace.' };
const stateInvalid = { description: 'campaign_state_invalid: the campaign’s status does not allow this.' };

function agentRefusalError(refusal: AgentRefusal): ApiError {
  switch (refusal.code) {
    case 'agent_missing':
      return resourceMissing('agent', 'agent_id');
    case 'agent_not_published':
      return agentNotPublished();
    case 'agent_has_no_number':
      return agentHasNoNumber();
    case 'from_number_not_assigned':
      return fromNumberNotAssigned();
    case 'from_number_required':
      return fromNumberRequired();
  }
}

/** The 400s a schema cannot express, and the 422 for emergency numbers, over new recipients. */
function checkRecipients(
  recipients: RecipientInput[],
  campaignMetadata: Record<string, string>,
  taken: ReadonlySet<string> = new Set(),
): void {
  const seen = new Set(taken);
  for (const [i, recipient] of recipients.entries()) {
    if (seen.has(recipient.to)) {
      throw parameterInvalid(
        `recipients[${i}].to`,
        `recipients[${i}].to is already a recipient of the campaign.`,
      );
    }
    seen.add(recipient.to);
    const merged = { ...campaignMetadata, ...recipient.metadata };
    if (Object.keys(merged).length > METADATA_LIMITS.maxKeys) {
      throw parameterInvalid(
        `recipients[${i}].metadata`,
        `recipients[${i}].metadata merged over the campaign's metadata must have at most ${METADATA_LIMITS.maxKeys} keys.`,
      );
    }
  }
}

function checkEmergencyNumbers(recipients: RecipientInput[]): void {
  const i = recipients.findIndex((recipient) => isEmergencyNumber(recipient.to));
  if (i >= 0) throw emergencyNumber(`recipients[${i}].to`);
}

function checkSchedule(schedule: CampaignCreate['schedule']): void {
  for (const [i, window] of (schedule?.windows ?? []).entries()) {
    if (window.start >= window.end) {
      throw parameterInvalid(
        `schedule.windows[${i}].end`,
        `schedule.windows[${i}].end must be after its start.`,
      );
    }
  }
}

async function insertRecipients(
  em: EntityManager,
  campaignId: string,
  recipients: RecipientInput[],
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

async function findCampaignOr404(em: EntityManager, workspaceId: string, campaignId: string, lock = false) {
  const campaign = await em.findOne(
    Campaign,
    { id: campaignId, workspace: workspaceId },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : {},
  );
  if (!campaign) throw resourceMissing('campaign', 'campaign_id');
  return campaign;
}

async function confirmStart(ctx: ApiContext, campaign: Campaign): Promise<void> {
  try {
    const client = await ctx.state.deps.temporal();
    await withTimeout(startCampaignWorkflow(client, ctx.state.deps.settings, campaign), TEMPORAL_TIMEOUT_MS);
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return;
    ctx.state.logger.error('campaign workflow start not confirmed', { error, campaign_id: campaign.id });
    throw upstreamUnavailable(
      'The campaign was created but its start was not confirmed; retry with the same Idempotency-Key.',
    );
  }
}

/**
 * Wakes the workflow for a change already committed. Best effort: the workflow also looks at the
 * campaign on its own at least every 15 minutes, and a lost signal is no lost change.
 */
async function tell(ctx: ApiContext, campaign: Campaign, change: CampaignChange): Promise<void> {
  try {
    const client = await ctx.state.deps.temporal();
    await withTimeout(signalCampaign(client, ctx.state.deps.settings, campaign, change), TEMPORAL_TIMEOUT_MS);
  } catch (error) {
    ctx.state.logger.warn('campaign workflow not signalled', { error, campaign_id: campaign.id, change });
  }
}

const create = defineRoute({
  method: 'POST',
  path: '/campaigns',
  operationId: 'createCampaign',
  summary: 'Create a campaign: calls its recipients with one published agent, paced, windowed and retried.',
  scope: 'calls:write',
  body: campaignCreateSchema,
  idempotent: true,
  responses: {
    201: {
      description: 'The campaign, scheduled or running.',
      schema: campaignSchema,
      links: linksTakingId('campaign_id', [
        'getCampaign',
        'listCampaignRecipients',
        'addCampaignRecipients',
        'pauseCampaign',
        'resumeCampaign',
        'cancelCampaign',
      ]),
    },
    404: { description: 'resource_missing: no such agent.' },
    409: { description: 'idempotency_key_reused or idempotency_request_in_progress.' },
    422: {
      description:
        'agent_not_published, agent_has_no_number, from_number_required, from_number_not_assigned, emergency_number (param recipients[i].to).',
    },
    503: { description: 'upstream_unavailable: created, start not confirmed; retry with the same key.' },
  },
  async handler(ctx, { body }) {
    const { workspaceId } = ctx.state.auth;
    checkSchedule(body.schedule);
    const metadata = body.metadata ?? {};
    checkRecipients(body.recipients, metadata);
    const { campaign, answer } = await ctx.state.em.transactional(async (em) => {
      const agent = await checkOutboundAgent(em, workspaceId, body.agent_id, body.from ?? undefined);
      if ('code' in agent) throw agentRefusalError(agent);
      checkEmergencyNumbers(body.recipients);
      const now = new Date();
      const startAt = body.schedule?.start_at ? new Date(body.schedule.start_at) : null;
      const campaign = em.create(Campaign, {
        id: randomUUID(),
        workspace: workspaceId,
        agent: body.agent_id,
        name: body.name,
        fromNumber: body.from ?? null,
        status: startAt && startAt > now ? 'scheduled' : 'running',
        pausedReason: null,
        startAt,
        timezone: body.schedule?.timezone ?? CAMPAIGN_DEFAULTS.timezone,
        windows: body.schedule?.windows ?? [],
        maxConcurrentCalls: body.max_concurrent_calls ?? CAMPAIGN_DEFAULTS.maxConcurrentCalls,
        retry: {
          max_attempts: body.retry?.max_attempts ?? CAMPAIGN_DEFAULTS.retry.max_attempts,
          delay_minutes: body.retry?.delay_minutes ?? CAMPAIGN_DEFAULTS.retry.delay_minutes,
          on: body.retry?.on ?? CAMPAIGN_DEFAULTS.retry.on,
        },
        firstMessage: body.first_message ?? null,
        metadata,
        completedEventId: null,
        createdAt: now,
        startedAt: null,
        endedAt: null,
      });
      await em.flush();
      await insertRecipients(em, campaign.id, body.recipients, 0);
      const answer = { status: 201, body: presentCampaign(campaign, await countRecipients(em, campaign.id)) };
      await storeAnswerWithWork(em, ctx, answer, { resourceId: campaign.id, confirmed: false });
      return { campaign, answer };
    });
    await confirmStart(ctx, campaign);
    return answer;
  },
  async resume(ctx, committed) {
    const campaign = await ctx.state.em.findOneOrFail(Campaign, { id: committed.resourceId! });
    await confirmStart(ctx, campaign);
  },
});

const list = defineRoute({
  method: 'GET',
  path: '/campaigns',
  operationId: 'listCampaigns',
  summary: 'List campaigns, newest first.',
  scope: 'calls:read',
  query: listQuerySchema(campaignListFilters),
  responses: { 200: { description: 'A page of campaigns.', schema: listSchema(campaignSchema) } },
  async handler(ctx, { query }) {
    const em = ctx.state.em;
    const where = {
      workspace: ctx.state.auth.workspaceId,
      ...(query.status ? { status: query.status } : {}),
    };
    const page = await paginate(em, Campaign, where, query, { orderBy: 'createdAt', present: (c) => c });
    const counts = await countRecipientsOf(
      em,
      page.data.map((campaign) => campaign.id),
    );
    return {
      status: 200,
      body: {
        ...page,
        data: page.data.map((campaign) => presentCampaign(campaign, counts.get(campaign.id)!)),
      },
    };
  },
});

const get = defineRoute({
  method: 'GET',
  path: '/campaigns/:campaign_id',
  operationId: 'getCampaign',
  summary: 'Get a campaign with the counts of its recipients in each state.',
  scope: 'calls:read',
  params: campaignParams,
  responses: { 200: { description: 'Campaign', schema: campaignSchema }, 404: missing },
  async handler(ctx, { params }) {
    const em = ctx.state.em;
    const campaign = await findCampaignOr404(em, ctx.state.auth.workspaceId, params.campaign_id);
    return { status: 200, body: presentCampaign(campaign, await countRecipients(em, campaign.id)) };
  },
});

const recipients = defineRoute({
  method: 'GET',
  path: '/campaigns/:campaign_id/recipients',
  operationId: 'listCampaignRecipients',
  summary: 'List a campaign’s recipients in the order given.',
  scope: 'calls:read',
  params: campaignParams,
  query: listQuerySchema(recipientListFilters),
  responses: {
    200: { description: 'A page of recipients.', schema: listSchema(recipientSchema) },
    404: missing,
  },
  async handler(ctx, { params, query }) {
    const em = ctx.state.em;
    const campaign = await findCampaignOr404(em, ctx.state.auth.workspaceId, params.campaign_id);
    const now = new Date();
    const where = { campaign: campaign.id, ...(query.status ? { status: query.status as never } : {}) };
    const page = await paginateInOrder(em, CampaignRecipient, where, query, {
      orderBy: 'position',
      present: (recipient) => presentRecipient(recipient, campaign, now),
    });
    return { status: 200, body: page };
  },
});

/** A state change under the campaign's row lock, then the signal; answers the campaign as it is now. */
async function changeCampaign(
  ctx: ApiContext,
  campaignId: string,
  change: CampaignChange,
  apply: (em: EntityManager, campaign: Campaign) => Promise<void>,
) {
  const campaign = await ctx.state.em.transactional(async (em) => {
    const campaign = await findCampaignOr404(em, ctx.state.auth.workspaceId, campaignId, true);
    await apply(em, campaign);
    await em.flush();
    return campaign;
  });
  await tell(ctx, campaign, change);
  return { status: 200, body: presentCampaign(campaign, await countRecipients(ctx.state.em, campaign.id)) };
}

function requireStatus(campaign: Campaign, allowed: CampaignStatus[], move: string): void {
  if (!allowed.includes(campaign.status)) {
    throw campaignStateInvalid(`A ${campaign.status} campaign cannot be ${move}.`);
  }
}

const addRecipients = defineRoute({
  method: 'POST',
  path: '/campaigns/:campaign_id/recipients',
  operationId: 'addCampaignRecipients',
  summary: 'Add 1 to 1000 recipients to a scheduled, running or paused campaign (100,000 at most in all).',
  scope: 'calls:write',
  params: campaignParams,
  body: recipientsAddSchema,
  responses: {
    200: { description: 'The campaign with its new counts.', schema: campaignSchema },
    404: missing,
    422: {
      description:
        'campaign_state_invalid, emergency_number (param recipients[i].to), campaign_recipient_limit (over 100,000).',
    },
  },
  handler: (ctx, { params, body }) =>
    changeCampaign(ctx, params.campaign_id, 'recipientsAdded', async (em, campaign) => {
      const connection = em.getConnection();
      const tx = em.getTransactionContext();
      const existing = await connection.execute<{ to_number: string }[]>(
        `select to_number from campaign_recipients where campaign_id = ? and to_number in (${body.recipients.map(() => '?').join(', ')})`,
        [campaign.id, ...body.recipients.map((recipient) => recipient.to)],
        'all',
        tx,
      );
      checkRecipients(body.recipients, campaign.metadata, new Set(existing.map((row) => row.to_number)));
      requireStatus(campaign, ['scheduled', 'running', 'paused'], 'given more recipients');
      checkEmergencyNumbers(body.recipients);
      const [{ n, last }] = await connection.execute<{ n: string; last: number | null }[]>(
        'select count(*) as n, max(position) as last from campaign_recipients where campaign_id = ?',
        [campaign.id],
        'all',
        tx,
      );
      if (Number(n) + body.recipients.length > RECIPIENTS_PER_CAMPAIGN) {
        throw campaignRecipientLimit(RECIPIENTS_PER_CAMPAIGN);
      }
      await insertRecipients(em, campaign.id, body.recipients, (last ?? -1) + 1);
    }),
});

const pause = defineRoute({
  method: 'POST',
  path: '/campaigns/:campaign_id/pause',
  operationId: 'pauseCampaign',
  summary: 'Pause a running campaign: no new calls; live calls go on to their end.',
  scope: 'calls:write',
  params: campaignParams,
  responses: {
    200: { description: 'The campaign, paused.', schema: campaignSchema },
    404: missing,
    422: stateInvalid,
  },
  handler: (ctx, { params }) =>
    changeCampaign(ctx, params.campaign_id, 'pause', async (_em, campaign) => {
      requireStatus(campaign, ['running'], 'paused');
      campaign.status = 'paused';
      campaign.pausedReason = 'requested';
    }),
});

const resume = defineRoute({
  method: 'POST',
  path: '/campaigns/:campaign_id/resume',
  operationId: 'resumeCampaign',
  summary: 'Resume a paused campaign.',
  scope: 'calls:write',
  params: campaignParams,
  responses: {
    200: { description: 'The campaign, running.', schema: campaignSchema },
    404: missing,
    422: stateInvalid,
  },
  handler: (ctx, { params }) =>
    changeCampaign(ctx, params.campaign_id, 'resume', async (_em, campaign) => {
      requireStatus(campaign, ['paused'], 'resumed');
      campaign.status = 'running';
      campaign.pausedReason = null;
    }),
});

const cancel = defineRoute({
  method: 'POST',
  path: '/campaigns/:campaign_id/cancel',
  operationId: 'cancelCampaign',
  summary: 'Cancel a campaign: every pending recipient is canceled; live calls go on to their end.',
  scope: 'calls:write',
  params: campaignParams,
  responses: {
    200: { description: 'The campaign, canceled.', schema: campaignSchema },
    404: missing,
    422: stateInvalid,
  },
  handler: (ctx, { params }) =>
    changeCampaign(ctx, params.campaign_id, 'cancel', async (em, campaign) => {
      requireStatus(campaign, ['scheduled', 'running', 'paused'], 'canceled');
      campaign.status = 'canceled';
      campaign.pausedReason = null;
      campaign.endedAt = new Date();
      await em
        .getConnection()
        .execute(
          "update campaign_recipients set status = 'canceled', retry_at = null where campaign_id = ? and status = 'pending'",
          [campaign.id],
          'run',
          em.getTransactionContext(),
        );
    }),
});

export const campaignRoutes: RouteDefinition[] = [
  list,
  create,
  get,
  recipients,
  addRecipients,
  pause,
  resume,
  cancel,
];
