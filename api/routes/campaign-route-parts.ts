import type { EntityManager } from '@mikro-orm/postgresql';
import { Campaign } from '../../db/entities/index.js';
import { loadDialingCountries } from '../../lib/accounts.js';
import { type DeploymentRules, destinationRefused } from '../../lib/calls/admit-outbound-call.js';
import { type CampaignMoveRefusal, lockCampaign } from '../../lib/campaigns/campaign-moves.js';
import { countRecipients, presentCampaign } from '../../lib/campaigns/campaign-resource.js';
import { type CampaignChange, signalCampaign } from '../../lib/campaigns/campaign-workflow-client.js';
import { admissionRefusalError } from '../http/admission-errors.js';
import { campaignStateInvalid, parameterInvalid, resourceMissing } from '../http/errors.js';
import type { ApiContext } from '../http/route.js';
import { askTemporal } from '../http/temporal-request.js';
import { METADATA_LIMITS } from '../schemas/call.js';
import type { RecipientInput } from '../schemas/campaign.js';
import { uuidParams } from '../schemas/common.js';

// What the campaign routes share (campaigns.ts, campaign-recipients.ts): finding the campaign,
// changing it under its row lock and telling its workflow, and the checks of new recipients.

export type CampaignParams = { campaign_id: string };
export const campaignParams = uuidParams('campaign_id');
export const campaignMissing = { description: 'resource_missing: no such campaign in the workspace.' };

export async function findCampaignOr404(em: EntityManager, workspaceId: string, campaignId: string) {
  const campaign = await em.findOne(Campaign, { id: campaignId, workspace: workspaceId });
  if (!campaign) throw resourceMissing('campaign', 'campaign_id');
  return campaign;
}

/** The 400s a schema cannot express, and the 422 for emergency numbers, over new recipients. */
export function checkRecipients(
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

/**
 * Where new recipients' calls would go (lib/calls/destination-policy.ts): 422 emergency_number or
 * destination_not_allowed at the first refused one. Each call checks again when it is placed (the
 * workspace's countries may change meanwhile), with the caller id it then has.
 */
export async function checkRecipientDestinations(
  em: EntityManager,
  workspaceId: string,
  recipients: RecipientInput[],
  deployment: DeploymentRules,
): Promise<void> {
  const dialingCountries = await loadDialingCountries(em, workspaceId, deployment.dialingCountries);
  for (const [i, recipient] of recipients.entries()) {
    const refusal = destinationRefused(recipient.to, { dialingCountries });
    if (refusal) throw admissionRefusalError({ ...refusal, param: `recipients[${i}].to` });
  }
}

/**
 * A change under the campaign's row lock (`apply` answers the move's refusal, or null), then the
 * signal; answers the campaign as it is now.
 */
export async function changeCampaign(
  ctx: ApiContext,
  campaignId: string,
  change: CampaignChange,
  apply: (em: EntityManager, campaign: Campaign) => Promise<CampaignMoveRefusal | null>,
) {
  const campaign = await ctx.state.em.transactional(async (em) => {
    const campaign = await lockCampaign(em, { id: campaignId, workspace: ctx.state.auth.workspaceId });
    if (!campaign) throw resourceMissing('campaign', 'campaign_id');
    const refusal = await apply(em, campaign);
    if (refusal) throw campaignStateInvalid(refusal.message);
    await em.flush();
    return campaign;
  });
  await tell(ctx, campaign, change);
  return { status: 200, body: presentCampaign(campaign, await countRecipients(ctx.state.em, campaign.id)) };
}

/**
 * Wakes the workflow for a change already committed. Best effort: the workflow also looks at the
 * campaign on its own at least every 15 minutes, and a lost signal is no lost change.
 */
async function tell(ctx: ApiContext, campaign: Campaign, change: CampaignChange): Promise<void> {
  try {
    await askTemporal(ctx.state.deps, (client, settings) =>
      signalCampaign(client, settings, campaign, change),
    );
  } catch (error) {
    ctx.state.logger.warn('campaign workflow not signalled', { error, campaign_id: campaign.id, change });
  }
}
