import {
  condition,
  makeContinueAsNewFunc,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { CampaignActivities } from '../activities/campaigns.js';
import {
  type CampaignProgress,
  type CampaignStep,
  callEndedSignal,
  campaignProgressQuery,
  cancelSignal,
  pauseSignal,
  recipientsAddedSignal,
  resumeSignal,
} from '../lib/temporal/campaign-messages.js';
import { CampaignStatusKey } from '../lib/temporal/search-attributes.js';
import type {
  CampaignWorkflow,
  CampaignWorkflowInput,
  CampaignWorkflowResult,
} from '../lib/temporal/workflow-contracts.js';
import { CAMPAIGN_STEP } from './activity-options.js';

// One workflow per campaign (`campaign-<campaignId>`, task queue `calls`). It keeps no recipient
// in memory: every step is the `advanceCampaign` activity (activities/campaigns.ts), which reads
// the campaign from PostgreSQL, settles ended calls, starts the calls that may start now and
// says when the next step is due. Between steps the workflow waits on one durable timer until
// then, or until a signal: pause, resume, cancel, recipients added (from the API, which has
// already changed the campaign's row), or a call's end (from the call workflow). It continues as
// new every CAMPAIGN_STEPS_PER_RUN steps, so a campaign of 100,000 recipients and weeks keeps
// a short history. Operators find it by the WorkspaceId and CampaignStatus search attributes.

/** Steps per run before continuing as new (about 10 history events each). */
export const CAMPAIGN_STEPS_PER_RUN = 500;

/** A run that has grown this long (the calls' end signals add up) continues as new whatever its steps. */
export const CAMPAIGN_HISTORY_EVENTS_PER_RUN = 10_000;

/** Without a signal or a due time, look again after this: a lost signal costs at most this long. */
const IDLE_CHECK_MS = 15 * 60_000;

const { advanceCampaign } = proxyActivities<CampaignActivities>(CAMPAIGN_STEP);

export async function campaignWorkflow(input: CampaignWorkflowInput): Promise<CampaignWorkflowResult> {
  const stepsPerRun = input.stepsPerRun ?? CAMPAIGN_STEPS_PER_RUN;
  const run = input.run ?? 0;
  let woken = false;
  let last: CampaignStep | null = null;
  let stepsThisRun = 0;
  const wake = () => {
    woken = true;
  };
  for (const signal of [pauseSignal, resumeSignal, cancelSignal]) setHandler(signal, wake);
  setHandler(recipientsAddedSignal, wake);
  setHandler(callEndedSignal, wake);
  setHandler(campaignProgressQuery, (): CampaignProgress => ({ step: last, run, stepsThisRun }));

  for (;;) {
    // Cleared before the step: a signal that arrives while it runs wakes the next wait at once.
    woken = false;
    const step = await advanceCampaign({
      campaignId: input.campaignId,
      now: new Date().toISOString(),
      eventsTaskQueue: input.eventsTaskQueue,
    });
    stepsThisRun++;
    if (last?.status !== step.status)
      upsertSearchAttributes([{ key: CampaignStatusKey, value: step.status }]);
    last = step;
    if (step.finished) return { status: step.status === 'completed' ? 'completed' : 'canceled' };
    const info = workflowInfo();
    if (
      stepsThisRun >= stepsPerRun ||
      info.historyLength >= CAMPAIGN_HISTORY_EVENTS_PER_RUN ||
      info.continueAsNewSuggested
    ) {
      // The next run keeps WorkspaceId and CampaignStatus, so operators' filters still find it.
      const next = makeContinueAsNewFunc<CampaignWorkflow>({
        typedSearchAttributes: info.typedSearchAttributes,
      });
      return next({ ...input, run: run + 1 });
    }
    const wait = step.wakeAt ? Math.max(0, Date.parse(step.wakeAt) - Date.now()) : IDLE_CHECK_MS;
    if (wait > 0) await condition(() => woken, wait);
  }
}
