import { Campaign } from '../../db/entities/index.js';
import { checkOutboundAgent } from '../../lib/calls/admit-outbound-call.js';
import { cancelCampaign, pauseCampaign, resumeCampaign } from '../../lib/campaigns/campaign-moves.js';
import {
  countRecipients,
  countRecipientsOf,
  presentCampaign,
} from '../../lib/campaigns/campaign-resource.js';
import { startCampaignWorkflow } from '../../lib/campaigns/campaign-workflow-client.js';
import { createCampaign } from '../../lib/campaigns/create-campaign.js';
import { agentRefusalError } from '../http/admission-errors.js';
import { parameterInvalid, upstreamUnavailable } from '../http/errors.js';
import { linksTakingId } from '../http/links.js';
import { listQuerySchema, listSchema, paginate } from '../http/pagination.js';
import { type ApiContext, defineRoute, type RouteDefinition } from '../http/route.js';
import { startWorkflowInRequest } from '../http/temporal-request.js';
import { storeAnswerWithWork } from '../middleware/idempotency.js';
import {
  CAMPAIGN_DEFAULTS,
  type CampaignCreate,
  campaignCreateSchema,
  campaignListFilters,
  campaignSchema,
} from '../schemas/campaign.js';
import {
  campaignParams,
  changeCampaign,
  checkRecipientDestinations,
  checkRecipients,
  findCampaignOr404,
  campaignMissing as missing,
} from './campaign-route-parts.js';

// Campaigns (spec campaigns-v1, docs/campaigns.md). The campaign's row is the truth about its
// state: these routes change it in a transaction holding the row's lock, then signal the
// campaign's workflow (`campaign-<id>`) to take its next step; which move each status allows is
// lib/campaigns/campaign-moves.ts, its recipients are campaign-recipients.ts. Checks of
// POST /campaigns, in order: the body schema (400, the timezone among them: an enum), what a
// schema cannot say (400: window start before end, `to` unique, merged metadata at most 20 keys),
// the agent as POST /calls checks it (404, 422), then emergency numbers (422 `recipients[i].to`).

const stateInvalid = { description: 'campaign_state_invalid: the campaign’s status does not allow this.' };

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

async function confirmStart(ctx: ApiContext, campaign: Campaign): Promise<void> {
  try {
    await startWorkflowInRequest(ctx.state.deps, (client, settings) =>
      startCampaignWorkflow(client, settings, campaign),
    );
  } catch (error) {
    ctx.state.logger.error('campaign workflow start not confirmed', { error, campaign_id: campaign.id });
    throw upstreamUnavailable(
      'The campaign was created but its start was not confirmed; retry with the same Idempotency-Key.',
    );
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
        'agent_not_published, agent_has_no_number, from_number_required, from_number_not_assigned, emergency_number or destination_not_allowed (param recipients[i].to).',
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
      await checkRecipientDestinations(em, workspaceId, body.recipients, ctx.state.deps.settings);
      const campaign = await createCampaign(em, workspaceId, {
        agentId: body.agent_id,
        name: body.name,
        from: body.from ?? null,
        startAt: body.schedule?.start_at ? new Date(body.schedule.start_at) : null,
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
        recipients: body.recipients,
      });
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
    changeCampaign(ctx, params.campaign_id, 'pause', async (_em, campaign) =>
      pauseCampaign(campaign, 'requested'),
    ),
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
    changeCampaign(ctx, params.campaign_id, 'resume', async (_em, campaign) => resumeCampaign(campaign)),
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
    changeCampaign(ctx, params.campaign_id, 'cancel', (em, campaign) =>
      cancelCampaign(em, campaign, new Date()),
    ),
});

export const campaignRoutes: RouteDefinition[] = [list, create, get];
export const campaignMoveRoutes: RouteDefinition[] = [pause, resume, cancel];
