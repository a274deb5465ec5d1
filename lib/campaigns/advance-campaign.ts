import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { type Call, Campaign, type CampaignPausedReason } from '../../db/entities/index.js';
import { type AdmissionRefusal, checkOutboundAgent } from '../calls/admit-outbound-call.js';
import { startCallWorkflow } from '../calls/start-call-workflow.js';
import type { Settings } from '../settings.js';
import type { CampaignStep } from '../temporal/campaign-messages.js';
import { startOnce } from '../temporal/start-once.js';
import { isInsideWindow, windowStartAtOrAfter } from './calling-windows.js';
import { lockCampaign, pauseCampaign, startCampaign } from './campaign-moves.js';
import { countRecipients } from './campaign-resource.js';
import { completeCampaign } from './complete-campaign.js';
import { settleEndedCalls, startLostCalls } from './settle-recipients.js';
import { dueRecipients, failRecipient, nextRetryAt, startRecipientCall } from './start-recipient-call.js';

// The campaign workflow's one step (docs/campaigns.md). Each step reads the campaign from
// PostgreSQL and moves it on as far as it can now, then says when the next step is due:
//   1. settle: recipients whose call is final become completed, failed, or pending again for a
//      retry (after `retry.delay_minutes`); calls admitted but whose workflow start was lost are
//      started (the call's workflow id is the call's, so nothing is dialed twice);
//   2. scheduled → running once `start_at` is reached;
//   3. running: completed when no recipient is pending or live; else, inside a window, start
//      calls in the order given while fewer than `max_concurrent_calls` are live, each through
//      admitOutboundCall, exactly like POST /calls. A per-minute or per-day limit, or the trial
//      plan's one line, makes it wait; the minutes quota pauses it (`quota_exceeded`), an agent
//      that can no longer call pauses it (`agent_unavailable`).
// Every change to a recipient is a conditional update under the campaign's row lock, and the
// recipient turns in_progress in the transaction that admits its call, so a step repeated after
// a crash (or a worker restart) never calls anyone twice for one attempt.

export interface CampaignStepDeps {
  /** A fresh EntityManager for each unit of work. */
  em: () => EntityManager;
  client: Client;
  settings: Pick<Settings, 'taskQueuePrefix' | 'dialingCountries'>;
}

export interface CampaignStepInput {
  campaignId: string;
  /** Workflow time, ISO. */
  now: string;
  eventsTaskQueue: string;
}

/** The trial plan's line is busy with a call that is not the campaign's: look again after this. */
const TRIAL_LINE_RECHECK_MS = 30_000;

/** What a step does when the admission of a recipient's call is refused. */
export type RefusalEffect =
  | { kind: 'wait'; wakeAt: Date | null; waitingFor: string }
  | { kind: 'pause'; reason: CampaignPausedReason }
  | { kind: 'fail_recipient' };

/**
 * A limit is waited out (a durable timer in the workflow), then a window; the trial plan's line
 * frees when a call ends (the campaign's own call signals its end, another's is looked at
 * later); the minutes quota or an agent that cannot call pauses the campaign; an emergency
 * number or a destination the dialing rules refuse fails its recipient only.
 */
export function refusalEffect(
  refusal: AdmissionRefusal,
  at: Date,
  ownCallsLive: boolean,
  windowed: (when: Date) => Date,
): RefusalEffect {
  switch (refusal.code) {
    case 'call_rate_limited':
    case 'call_daily_limit':
      return {
        kind: 'wait',
        wakeAt: windowed(new Date(at.getTime() + Math.ceil(refusal.retryAfterSeconds * 1000))),
        waitingFor: refusal.code,
      };
    case 'trial_line_busy':
      return {
        kind: 'wait',
        wakeAt: ownCallsLive ? null : new Date(at.getTime() + TRIAL_LINE_RECHECK_MS),
        waitingFor: 'trial_line',
      };
    case 'quota_exceeded':
      return { kind: 'pause', reason: 'quota_exceeded' };
    case 'emergency_number':
    case 'destination_not_allowed':
      return { kind: 'fail_recipient' };
    default:
      return { kind: 'pause', reason: 'agent_unavailable' };
  }
}

/** One step of the campaign at workflow time `input.now`; see the comment at the top. */
export async function advanceCampaign(
  deps: CampaignStepDeps,
  input: CampaignStepInput,
): Promise<CampaignStep> {
  const { campaignId } = input;
  const at = new Date(input.now);
  // A call's admission (its started_at, the limits' windows) is stamped with the time it
  // happens: the wall clock, or workflow time moved on by the step's own duration where that
  // is later (the time-skipping tests' skipped days). Stamping it with `at` alone, the time the
  // workflow asked for the step, put a call's start before the end of the call whose slot it
  // took (the campaigns bench measured 54 live calls for a limit of 50 from start and end
  // times, though never more than 50 recipients were in_progress).
  const stepStartedMs = Date.now();
  const clock = () => new Date(Math.max(at.getTime() + (Date.now() - stepStartedMs), Date.now()));
  const idle = { started: 0, wakeAt: null, waitingFor: null, finished: false };
  const step = (found: Omit<CampaignStep, 'status' | 'pausedReason' | 'counts'>) =>
    stepOf(deps.em(), campaignId, found);

  if (!(await deps.em().findOne(Campaign, { id: campaignId }))) return step({ ...idle, finished: true });
  await settleEndedCalls(deps.em(), campaignId);
  await startLostCalls(deps.em(), deps.client, deps.settings, campaignId);

  let campaign = await deps.em().findOneOrFail(Campaign, { id: campaignId });
  if (campaign.status === 'scheduled') {
    if (campaign.startAt && campaign.startAt > at) {
      return step({ ...idle, wakeAt: campaign.startAt.toISOString(), waitingFor: 'start_at' });
    }
    await move(deps.em(), campaignId, startCampaign);
    campaign = await deps.em().findOneOrFail(Campaign, { id: campaignId });
  }
  if (campaign.status !== 'running') return step(idle);

  const counts = await countRecipients(deps.em(), campaignId);
  if (counts.pending + counts.in_progress === 0) {
    await completeCampaign(deps.em(), deps.client, {
      campaignId,
      at,
      eventsTaskQueue: input.eventsTaskQueue,
    });
    return step(idle);
  }
  if (counts.pending === 0) return step({ ...idle, waitingFor: 'calls_to_end' });

  // The agent is looked at even while waiting for a window: it pauses the campaign at once.
  const from = campaign.fromNumber ?? undefined;
  if ('code' in (await checkOutboundAgent(deps.em(), campaign.workspace, campaign.agent, from))) {
    await move(deps.em(), campaignId, (c) => pauseCampaign(c, 'agent_unavailable'));
    return step(idle);
  }

  const { timezone, windows } = campaign;
  const windowed = (when: Date) => windowStartAtOrAfter(when, timezone, windows);
  if (!isInsideWindow(at, timezone, windows)) {
    return step({ ...idle, wakeAt: windowed(at).toISOString(), waitingFor: 'window' });
  }
  const retryAt = await nextRetryAt(deps.em(), campaignId, at);
  const free = campaign.maxConcurrentCalls - counts.in_progress;
  const calls = await callDueRecipients(
    deps,
    campaignId,
    at,
    free,
    {
      wakeAt: retryAt ? windowed(retryAt) : null,
      ownCallsLive: counts.in_progress > 0,
      windowed,
    },
    clock,
  );
  return step({
    started: calls.started,
    wakeAt: calls.wakeAt ? calls.wakeAt.toISOString() : null,
    waitingFor: calls.waitingFor,
    finished: false,
  });
}

/**
 * Step 3's calls: admits due recipients in order into the `free` slots until a refusal stops it,
 * then starts the admitted calls' workflows side by side (each admission is committed already;
 * one whose start is lost here is started by the next step).
 */
async function callDueRecipients(
  deps: CampaignStepDeps,
  campaignId: string,
  at: Date,
  free: number,
  wait: { wakeAt: Date | null; ownCallsLive: boolean; windowed: (when: Date) => Date },
  clock: () => Date,
): Promise<{ started: number; wakeAt: Date | null; waitingFor: string | null }> {
  let wakeAt = wait.wakeAt;
  let waitingFor: string | null = wakeAt ? 'retry_delay' : null;
  const due = free > 0 ? await dueRecipients(deps.em(), campaignId, at, free) : [];
  const admitted: Call[] = [];
  for (const recipient of due) {
    const outcome = await startRecipientCall(deps.em(), campaignId, recipient, clock(), deps.settings);
    if (outcome.started) {
      admitted.push(outcome.call);
      continue;
    }
    if (outcome.stop === 'not_pending') continue;
    if (outcome.stop !== 'refused') break;
    const ownCallsLive = wait.ownCallsLive || admitted.length > 0;
    const effect = refusalEffect(outcome.refusal, at, ownCallsLive, wait.windowed);
    if (effect.kind === 'fail_recipient') {
      await failRecipient(deps.em(), recipient.id);
      continue;
    }
    if (effect.kind === 'pause') {
      await move(deps.em(), campaignId, (c) => pauseCampaign(c, effect.reason));
    } else {
      if (effect.wakeAt) wakeAt = effect.wakeAt;
      waitingFor = effect.waitingFor;
    }
    break;
  }
  await Promise.all(admitted.map((call) => startOnce(startCallWorkflow(deps.client, deps.settings, call))));
  if (admitted.length === due.length && due.length === free) waitingFor ??= 'concurrency';
  return { started: admitted.length, wakeAt, waitingFor };
}

/** A move of the campaign's state machine under its row lock; nothing when its status forbids it. */
async function move(em: EntityManager, campaignId: string, apply: (campaign: Campaign) => unknown) {
  await em.transactional(async (tx) => {
    const campaign = await lockCampaign(tx, { id: campaignId });
    if (!campaign) return;
    apply(campaign);
    await tx.flush();
  });
}

/** The step's answer: what it did, with the campaign's status and counts as they are now. */
async function stepOf(
  em: EntityManager,
  campaignId: string,
  step: Omit<CampaignStep, 'status' | 'pausedReason' | 'counts'>,
): Promise<CampaignStep> {
  const campaign = await em.findOne(Campaign, { id: campaignId });
  const counts = await countRecipients(em, campaignId);
  const status = campaign?.status ?? 'canceled';
  const finished =
    step.finished || status === 'completed' || (status === 'canceled' && counts.in_progress === 0);
  return {
    ...step,
    status,
    pausedReason: status === 'paused' ? (campaign?.pausedReason ?? null) : null,
    counts,
    finished,
    ...(finished ? { wakeAt: null, waitingFor: null } : {}),
  };
}
