import { CampaignRecipient } from '../../db/entities/index.js';
import { campaignMoveRefusal } from '../../lib/campaigns/campaign-moves.js';
import {
  insertRecipients,
  recipientNumbersTaken,
  recipientTally,
} from '../../lib/campaigns/campaign-recipients.js';
import { presentRecipient } from '../../lib/campaigns/campaign-resource.js';
import { campaignRecipientLimit } from '../http/errors.js';
import { listQuerySchema, listSchema, paginateInOrder } from '../http/pagination.js';
import { defineRoute, type RouteDefinition } from '../http/route.js';
import {
  campaignSchema,
  RECIPIENTS_PER_CAMPAIGN,
  recipientListFilters,
  recipientSchema,
  recipientsAddSchema,
} from '../schemas/campaign.js';
import {
  campaignParams,
  changeCampaign,
  checkRecipientDestinations,
  checkRecipients,
  findCampaignOr404,
  campaignMissing as missing,
} from './campaign-route-parts.js';

// A campaign's recipients (spec campaigns-v1, docs/campaigns.md): listed in the order given, and
// added to a campaign that has not ended.

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
        'campaign_state_invalid, emergency_number or destination_not_allowed (param recipients[i].to), campaign_recipient_limit (over 100,000).',
    },
  },
  handler: (ctx, { params, body }) =>
    changeCampaign(ctx, params.campaign_id, 'recipientsAdded', async (em, campaign) => {
      const numbers = body.recipients.map((recipient) => recipient.to);
      checkRecipients(
        body.recipients,
        campaign.metadata,
        await recipientNumbersTaken(em, campaign.id, numbers),
      );
      const refusal = campaignMoveRefusal(campaign, 'add_recipients');
      if (refusal) return refusal;
      await checkRecipientDestinations(
        em,
        ctx.state.auth.workspaceId,
        body.recipients,
        ctx.state.deps.settings,
      );
      const { count, nextPosition } = await recipientTally(em, campaign.id);
      if (count + body.recipients.length > RECIPIENTS_PER_CAMPAIGN) {
        throw campaignRecipientLimit(RECIPIENTS_PER_CAMPAIGN);
      }
      await insertRecipients(em, campaign.id, body.recipients, nextPosition);
      return null;
    }),
});

export const campaignRecipientRoutes: RouteDefinition[] = [recipients, addRecipients];
