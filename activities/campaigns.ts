import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import type { Orm } from '../db/orm.js';
import { advanceCampaign, type CampaignStepInput } from '../lib/campaigns/advance-campaign.js';
import type { Settings } from '../lib/settings.js';
import type { CampaignStep } from '../lib/temporal/campaign-messages.js';
import { heartbeating } from './heartbeat.js';

// The campaign workflow's activities: its one step, lib/campaigns/advance-campaign.ts.

export interface CampaignActivityDeps {
  orm: Orm;
  settings: Pick<Settings, 'taskQueuePrefix' | 'dialingCountries'>;
}

export function createCampaignActivities(deps: CampaignActivityDeps) {
  const em = () => deps.orm.em.fork() as EntityManager;
  return heartbeating({
    /** One step of the campaign at workflow time `now` (ISO). */
    advanceCampaign: (input: CampaignStepInput): Promise<CampaignStep> =>
      advanceCampaign({ em, client: Context.current().client, settings: deps.settings }, input),
  });
}

export type CampaignActivities = ReturnType<typeof createCampaignActivities>;
