import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import {
  Call,
  Campaign,
  type CampaignPausedReason,
  type CampaignStatus,
  type RecipientStatus,
} from '../db/entities/index.js';
import type { Orm } from '../db/orm.js';
import {
  type AdmissionRefusal,
  admitOutboundCall,
  checkOutboundAgent,
} from '../lib/calls/admit-outbound-call.js';
import { startCallWorkflow } from '../lib/calls/start-call-workflow.js';
import { isInsideWindow, windowStartAtOrAfter } from '../lib/campaigns/calling-windows.js';
import { countRecipients, presentCampaign } from '../lib/campaigns/campaign-resource.js';
import { buildEventEnvelope } from '../lib/events/event-envelope.js';
import type { Settings } from '../lib/settings.js';
import type { CampaignStep } from '../lib/temporal/campaign-messages.js';
import {
  EVENT_FAN_OUT_WORKFLOW,
  type EventFanOutWorkflow,
  eventFanOutWorkflowId,
} from '../lib/temporal/workflow-contracts.js';
import { heartbeating } from './heartbeat.js';

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

export interface CampaignActivityDeps {
  orm: Orm;
  settings: Pick<Settings, 'taskQueuePrefix'>;
}

/** The trial plan's line is busy with a call that is not the campaign's: look again after this. */
const TRIAL_LINE_RECHECK_MS = 30_000;

const FINAL_CALL_STATUSES = ['completed', 'failed', 'no_answer', 'busy', 'canceled'];

interface RecipientToCall {
  id: string;
  to_number: string;
  metadata: Record<string, string>;
}

type StartOutcome =
  | { started: true; call: Call }
  | { started: false; stop: 'not_running' | 'no_slot' | 'not_pending' }
  | { started: false; stop: 'refused'; refusal: AdmissionRefusal };

export function createCampaignActivities(deps: CampaignActivityDeps) {
  const fork = () => deps.orm.em.fork() as EntityManager;

  async function lockCampaign(em: EntityManager, campaignId: string): Promise<Campaign | null> {
    return em.findOne(Campaign, { id: campaignId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  }

  /** Recipients whose live call has become final: their outcome, under the campaign's lock. */
  async function settleEndedCalls(campaignId: string): Promise<void> {
    await fork().transactional(async (em) => {
      const campaign = await lockCampaign(em, campaignId);
      if (!campaign) return;
      const ended = await em.getConnection().execute<
        {
          id: string;
          attempts: number;
          call_status: string;
          end_reason: string | null;
          ended_at: Date | null;
        }[]
      >(
        `select r.id, r.attempts, c.status as call_status, c.end_reason, c.ended_at
           from campaign_recipients r join calls c on c.id = r.current_call_id
          where r.campaign_id = ? and r.status = 'in_progress'
            and c.status in (${FINAL_CALL_STATUSES.map(() => '?').join(', ')})`,
        [campaignId, ...FINAL_CALL_STATUSES],
        'all',
        em.getTransactionContext(),
      );
      for (const row of ended) {
        const reason = row.end_reason ?? row.call_status;
        let status: RecipientStatus;
        let retryAt: Date | null = null;
        if (row.call_status === 'completed') status = 'completed';
        else if (campaign.retry.on.includes(reason as never) && row.attempts < campaign.retry.max_attempts) {
          // A retry of a canceled campaign will never come.
          status = campaign.status === 'canceled' ? 'canceled' : 'pending';
          const endedAt = row.ended_at ? new Date(row.ended_at) : new Date();
          if (status === 'pending')
            retryAt = new Date(endedAt.getTime() + campaign.retry.delay_minutes * 60_000);
        } else status = 'failed';
        await em.getConnection().execute(
          `update campaign_recipients set status = ?, last_end_reason = ?, retry_at = ?
            where id = ? and status = 'in_progress'`,
          [status, reason, retryAt, row.id],
          'run',
          em.getTransactionContext(),
        );
      }
    });
  }

  /** Calls admitted by an earlier step whose workflow start was not confirmed: start them (once). */
  async function startLostCalls(client: Client, campaignId: string): Promise<void> {
    const em = fork();
    const rows = await em.getConnection().execute<{ id: string }[]>(
      `select c.id from campaign_recipients r join calls c on c.id = r.current_call_id
        where r.campaign_id = ? and r.status = 'in_progress' and c.status = 'queued'`,
      [campaignId],
    );
    if (rows.length === 0) return;
    const queued = await em.find(Call, { id: { $in: rows.map((row) => row.id) } });
    for (const call of queued) await startCall(client, call);
  }

  async function startCall(client: Client, call: Call): Promise<void> {
    try {
      await startCallWorkflow(client, deps.settings, call);
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }

  /** Sets status (and paused_reason) when the campaign is still in one of `from`. */
  async function moveCampaign(
    campaignId: string,
    from: CampaignStatus[],
    to: CampaignStatus,
    change: (campaign: Campaign) => void = () => {},
  ): Promise<boolean> {
    return fork().transactional(async (em) => {
      const campaign = await lockCampaign(em, campaignId);
      if (!campaign || !from.includes(campaign.status)) return false;
      campaign.status = to;
      change(campaign);
      await em.flush();
      return true;
    });
  }

  async function pause(campaignId: string, reason: CampaignPausedReason): Promise<void> {
    await moveCampaign(campaignId, ['running'], 'paused', (campaign) => {
      campaign.pausedReason = reason;
    });
  }

  /** Admits one recipient's call, all inside the transaction that marks it in_progress. */
  async function startRecipient(
    campaignId: string,
    recipient: RecipientToCall,
    at: Date,
  ): Promise<StartOutcome> {
    return fork().transactional(async (em): Promise<StartOutcome> => {
      const campaign = await lockCampaign(em, campaignId);
      if (campaign?.status !== 'running') return { started: false, stop: 'not_running' };
      const connection = em.getConnection();
      const ctx = em.getTransactionContext();
      const [{ live }] = await connection.execute<{ live: string }[]>(
        "select count(*) as live from campaign_recipients where campaign_id = ? and status = 'in_progress'",
        [campaignId],
        'all',
        ctx,
      );
      if (Number(live) >= campaign.maxConcurrentCalls) return { started: false, stop: 'no_slot' };
      const [row] = await connection.execute<{ status: RecipientStatus }[]>(
        'select status from campaign_recipients where id = ? for update',
        [recipient.id],
        'all',
        ctx,
      );
      if (row?.status !== 'pending') return { started: false, stop: 'not_pending' };
      const admission = await admitOutboundCall(
        em,
        campaign.workspace,
        {
          agentId: campaign.agent,
          to: recipient.to_number,
          ...(campaign.fromNumber ? { from: campaign.fromNumber } : {}),
          metadata: { ...campaign.metadata, ...recipient.metadata },
          ...(campaign.firstMessage !== null && campaign.firstMessage !== undefined
            ? { firstMessage: campaign.firstMessage }
            : {}),
          campaignId,
        },
        at,
      );
      if (!admission.admitted) return { started: false, stop: 'refused', refusal: admission.refusal };
      await connection.execute(
        `update campaign_recipients
            set status = 'in_progress', attempts = attempts + 1, call_ids = call_ids || ?::jsonb,
                current_call_id = ?, retry_at = null
          where id = ?`,
        [JSON.stringify([admission.call.id]), admission.call.id, recipient.id],
        'run',
        ctx,
      );
      campaign.startedAt ??= at;
      await em.flush();
      return { started: true, call: admission.call };
    });
  }

  /** Completes a running campaign with nothing pending or live, with its campaign.completed event. */
  async function complete(campaignId: string, at: Date, eventsTaskQueue: string, client: Client) {
    const eventId = await fork().transactional(async (em) => {
      const campaign = await lockCampaign(em, campaignId);
      if (!campaign) return null;
      if (campaign.status === 'running') {
        const counts = await countRecipients(em, campaignId);
        if (counts.pending + counts.in_progress > 0) return null;
        campaign.status = 'completed';
        campaign.endedAt = at;
        const { id, body } = buildEventEnvelope({
          type: 'campaign.completed',
          occurredAt: at,
          data: { object: presentCampaign(campaign, counts) },
        });
        await em.getConnection().execute(
          `insert into events (id, workspace_id, type, api_version, call_id, body, created_at)
             values (?, ?, 'campaign.completed', 'v1', null, ?, ?)`,
          [id, campaign.workspace, body, at],
          'run',
          em.getTransactionContext(),
        );
        campaign.completedEventId = id;
        await em.flush();
      }
      return campaign.status === 'completed' ? campaign.completedEventId : null;
    });
    // Handed to delivery once (a repeated step finds the fan-out started).
    if (eventId) {
      try {
        await client.workflow.start<EventFanOutWorkflow>(EVENT_FAN_OUT_WORKFLOW, {
          args: [{ eventId }],
          workflowId: eventFanOutWorkflowId(eventId),
          taskQueue: eventsTaskQueue,
          staticSummary: `campaign.completed of campaign ${campaignId}`,
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        });
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    }
  }

  async function nextRetryAt(campaignId: string, at: Date): Promise<Date | null> {
    const [row] = await fork()
      .getConnection()
      .execute<{ next: Date | null }[]>(
        "select min(retry_at) as next from campaign_recipients where campaign_id = ? and status = 'pending' and retry_at > ?",
        [campaignId, at],
      );
    return row?.next ? new Date(row.next) : null;
  }

  async function dueRecipients(campaignId: string, at: Date, limit: number): Promise<RecipientToCall[]> {
    return fork()
      .getConnection()
      .execute<RecipientToCall[]>(
        `select id, to_number, metadata from campaign_recipients
          where campaign_id = ? and status = 'pending' and (retry_at is null or retry_at <= ?)
          order by position limit ?`,
        [campaignId, at, limit],
      );
  }

  async function stepOf(
    campaignId: string,
    step: Omit<CampaignStep, 'status' | 'pausedReason' | 'counts'>,
  ): Promise<CampaignStep> {
    const em = fork();
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

  return heartbeating({
    /** One step of the campaign at workflow time `now` (ISO); see the comment at the top. */
    async advanceCampaign(input: {
      campaignId: string;
      now: string;
      eventsTaskQueue: string;
    }): Promise<CampaignStep> {
      const { campaignId, eventsTaskQueue } = input;
      const at = new Date(input.now);
      // A call's admission (its started_at, the limits' windows) is stamped with the time it
      // happens: the wall clock, or workflow time moved on by the step's own duration where that
      // is later (the time-skipping tests' skipped days). Stamping it with `at` alone, the time the
      // workflow asked for the step, put a call's start before the end of the call whose slot it
      // took (the campaigns bench measured 54 live calls for a limit of 50 from start and end
      // times, though never more than 50 recipients were in_progress).
      const stepStartedMs = Date.now();
      const clock = () => new Date(Math.max(at.getTime() + (Date.now() - stepStartedMs), Date.now()));
      const client = Context.current().client;
      const idle = { started: 0, wakeAt: null, waitingFor: null, finished: false };

      const found = await fork().findOne(Campaign, { id: campaignId });
      if (!found) return stepOf(campaignId, { ...idle, finished: true });
      await settleEndedCalls(campaignId);
      await startLostCalls(client, campaignId);

      let campaign = await fork().findOneOrFail(Campaign, { id: campaignId });
      if (campaign.status === 'scheduled') {
        if (campaign.startAt && campaign.startAt > at) {
          return stepOf(campaignId, {
            ...idle,
            wakeAt: campaign.startAt.toISOString(),
            waitingFor: 'start_at',
          });
        }
        await moveCampaign(campaignId, ['scheduled'], 'running');
        campaign = await fork().findOneOrFail(Campaign, { id: campaignId });
      }
      if (campaign.status !== 'running') return stepOf(campaignId, idle);

      const counts = await countRecipients(fork(), campaignId);
      if (counts.pending + counts.in_progress === 0) {
        await complete(campaignId, at, eventsTaskQueue, client);
        return stepOf(campaignId, idle);
      }
      if (counts.pending === 0) return stepOf(campaignId, { ...idle, waitingFor: 'calls_to_end' });

      // The agent is looked at even while waiting for a window: it pauses the campaign at once.
      const agent = await checkOutboundAgent(
        fork(),
        campaign.workspace,
        campaign.agent,
        campaign.fromNumber ?? undefined,
      );
      if ('code' in agent) {
        await pause(campaignId, 'agent_unavailable');
        return stepOf(campaignId, idle);
      }

      const retryAt = await nextRetryAt(campaignId, at);
      const windowed = (when: Date) => windowStartAtOrAfter(when, campaign.timezone, campaign.windows);
      const laterRetry = retryAt ? windowed(retryAt) : null;
      if (!isInsideWindow(at, campaign.timezone, campaign.windows)) {
        return stepOf(campaignId, { ...idle, wakeAt: windowed(at).toISOString(), waitingFor: 'window' });
      }

      let started = 0;
      let wakeAt: Date | null = laterRetry;
      let waitingFor: string | null = laterRetry ? 'retry_delay' : null;
      const free = campaign.maxConcurrentCalls - counts.in_progress;
      const due = free > 0 ? await dueRecipients(campaignId, at, free) : [];
      const admitted: Call[] = [];
      for (const recipient of due) {
        const outcome = await startRecipient(campaignId, recipient, clock());
        if (outcome.started) {
          admitted.push(outcome.call);
          started++;
          continue;
        }
        if (outcome.stop === 'not_pending') continue;
        if (outcome.stop !== 'refused') break;
        const { refusal } = outcome;
        if (refusal.code === 'call_rate_limited' || refusal.code === 'call_daily_limit') {
          // Waits out the limit (a durable timer in the workflow), then a window.
          wakeAt = windowed(new Date(at.getTime() + Math.ceil(refusal.retryAfterSeconds * 1000)));
          waitingFor = refusal.code;
        } else if (refusal.code === 'quota_exceeded') {
          await pause(campaignId, 'quota_exceeded');
        } else if (refusal.code === 'trial_line_busy') {
          // The line frees when a call ends: our own call's end signals; another's is looked at later.
          const ownLive = counts.in_progress + started > 0;
          if (!ownLive) wakeAt = new Date(at.getTime() + TRIAL_LINE_RECHECK_MS);
          waitingFor = 'trial_line';
        } else if (refusal.code === 'emergency_number') {
          await fork()
            .getConnection()
            .execute("update campaign_recipients set status = 'failed' where id = ? and status = 'pending'", [
              recipient.id,
            ]);
          continue;
        } else {
          await pause(campaignId, 'agent_unavailable');
        }
        break;
      }
      // The admitted calls' workflows start side by side (each admission is committed already; one
      // whose start is lost here is started by the next step).
      await Promise.all(admitted.map((call) => startCall(client, call)));
      if (started === due.length && due.length === free) waitingFor ??= 'concurrency';
      return stepOf(campaignId, {
        started,
        wakeAt: wakeAt ? wakeAt.toISOString() : null,
        waitingFor,
        finished: false,
      });
    },
  });
}

export type CampaignActivities = ReturnType<typeof createCampaignActivities>;
