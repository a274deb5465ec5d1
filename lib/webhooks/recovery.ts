import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { WebhookEndpoint, WebhookRecovery } from '../../db/entities/index.js';
import type { Settings } from '../settings.js';
import { taskQueues } from '../temporal/task-queues.js';
import {
  WEBHOOK_RECOVERY_WORKFLOW,
  type WebhookRecoveryWorkflow,
  webhookRecoveryWorkflowId,
} from '../temporal/workflow-contracts.js';

// Recoveries (POST /webhooks/{id}/recover, docs/webhooks.md): the events of a period whose last
// delivery to the endpoint failed are fixed when the recovery is requested, then sent again,
// oldest first, by the workflow `webhook-recovery-<id>` at the pace of retry-schedule.ts.

/** `since` may be at most this far back. */
export const RECOVERY_WINDOW_DAYS = 14;
export const RECOVERY_WINDOW_MS = RECOVERY_WINDOW_DAYS * 24 * 60 * 60_000;

/**
 * A running recovery and the list of its events, in the caller's transaction. Throws MikroORM's
 * UniqueConstraintViolationException when the endpoint has a recovery running already.
 */
export async function createRecovery(
  em: EntityManager,
  input: { endpoint: WebhookEndpoint; since: Date; until: Date | null; now: Date },
): Promise<WebhookRecovery> {
  const { endpoint, since, until, now } = input;
  const recovery = em.create(WebhookRecovery, {
    id: randomUUID(),
    workspace: endpoint.workspace,
    endpoint: endpoint.id,
    status: 'running',
    stopReason: null,
    since,
    until,
    eventsTotal: 0,
    eventsSent: 0,
    createdAt: now,
    updatedAt: now,
    completedAt: null,
  });
  await em.flush();
  // Each event of the period (webhook.test aside) whose newest delivery to the endpoint failed,
  // numbered oldest first. An `until` after the request counts as the time of the request.
  const end = until && until < now ? until : now;
  const added = await em.execute<{ affectedRows: number }>(
    `insert into webhook_recovery_items (recovery_id, position, event_id, failed_delivery)
     select ?, row_number() over (order by last.event_created_at, last.event_id), last.event_id, last.id
       from (select distinct on (d.event_id) d.id, d.event_id, d.status, e.created_at as event_created_at
               from webhook_deliveries d
               join events e on e.id = d.event_id
              where d.endpoint_id = ? and e.type <> 'webhook.test'
                and e.created_at >= ?::timestamptz and e.created_at <= ?::timestamptz
              order by d.event_id, d.created_at desc, d.id desc) last
      where last.status = 'failed'`,
    [recovery.id, endpoint.id, since.toISOString(), end.toISOString()],
    'run',
  );
  recovery.eventsTotal = added.affectedRows;
  await em.flush();
  return recovery;
}

/** A delivery a recovery made, with what the Web UI shows of it. */
export interface RecoveredDelivery {
  deliveryId: string;
  eventId: string;
  eventType: string;
}

export interface RecoveryStep {
  /** `more`: events are left; `done`: every event was taken; `stopped`: the recovery ended early. */
  state: 'more' | 'done' | 'stopped';
  /** In the order to send them (oldest event first). */
  deliveries: RecoveredDelivery[];
  /** Position of the last event taken. */
  position: number;
  endpointUrl: string | null;
}

/**
 * Sends the next `limit` events after `position` again: a pending delivery each (origin
 * `recover`, linked to the failed one), whose workflows the caller starts. Safe to repeat: an
 * event already given its delivery keeps it. Stops the recovery (and sends nothing) when the
 * endpoint is no longer active.
 */
export async function takeNextRecoveryEvents(
  em: EntityManager,
  input: { recoveryId: string; position: number; limit: number; now: Date },
): Promise<RecoveryStep> {
  return em.transactional(async (tx) => {
    const recovery = await tx.findOne(
      WebhookRecovery,
      { id: input.recoveryId },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    const unchanged = { deliveries: [], position: input.position, endpointUrl: null };
    // Gone with its endpoint, or ended by someone else.
    if (!recovery || recovery.status === 'stopped') return { state: 'stopped', ...unchanged };
    if (recovery.status === 'completed') return { state: 'done', ...unchanged };
    const endpoint = await tx.findOne(WebhookEndpoint, { id: recovery.endpoint });
    if (endpoint?.status !== 'active') {
      recovery.status = 'stopped';
      recovery.stopReason = endpoint?.status === 'disabled' ? 'endpoint_disabled' : 'endpoint_paused';
      recovery.completedAt = input.now;
      await tx.flush();
      return { state: 'stopped', ...unchanged };
    }
    const items = await tx.execute<
      {
        position: number;
        event_id: string;
        event_type: string;
        failed_delivery: string;
        delivery: string | null;
      }[]
    >(
      `select i.position, i.event_id, e.type as event_type, i.failed_delivery, i.delivery
         from webhook_recovery_items i join events e on e.id = i.event_id
        where i.recovery_id = ? and i.position > ? order by i.position limit ?`,
      [recovery.id, input.position, input.limit],
      'all',
    );
    const deliveries: RecoveredDelivery[] = [];
    for (const item of items) {
      let deliveryId = item.delivery;
      if (!deliveryId) {
        deliveryId = randomUUID();
        await tx.execute(
          `insert into webhook_deliveries
             (id, workspace_id, endpoint_id, event_id, event_type, status, origin, resent_from_id,
              recovery_id, attempts, created_at, updated_at)
           select ?, e.workspace_id, ?, e.id, e.type, 'pending', 'recover', ?, ?, 0, t.at, t.at
             from events e,
                  lateral (select greatest(?::timestamptz, max(d.created_at) + interval '1 millisecond') as at
                             from webhook_deliveries d
                            where d.event_id = e.id and d.endpoint_id = ?) t
            where e.id = ?`,
          [
            deliveryId,
            endpoint.id,
            item.failed_delivery,
            recovery.id,
            input.now.toISOString(),
            endpoint.id,
            item.event_id,
          ],
          'run',
        );
        await tx.execute(
          'update webhook_recovery_items set delivery = ? where recovery_id = ? and position = ?',
          [deliveryId, recovery.id, item.position],
          'run',
        );
      }
      deliveries.push({ deliveryId, eventId: item.event_id, eventType: item.event_type });
    }
    const position = items.at(-1)?.position ?? input.position;
    if (position > recovery.eventsSent) {
      recovery.eventsSent = position;
      recovery.updatedAt = input.now;
      await tx.flush();
    }
    return {
      state: position >= recovery.eventsTotal ? 'done' : 'more',
      deliveries,
      position,
      endpointUrl: endpoint.url,
    };
  });
}

/** Every event was handed to delivery: the recovery is `completed` (unless it was stopped). */
export async function completeRecovery(em: EntityManager, recoveryId: string, now: Date): Promise<void> {
  await em.nativeUpdate(
    WebhookRecovery,
    { id: recoveryId, status: 'running' },
    { status: 'completed', completedAt: now, updatedAt: now },
  );
}

/** Starts `webhook-recovery-<recoveryId>` on the webhooks queue. */
export async function startWebhookRecovery(
  client: Client,
  settings: Pick<Settings, 'taskQueuePrefix'>,
  recoveryId: string,
  /** What the Web UI shows for it. */
  about?: { endpointUrl: string; eventsTotal: number; since: Date; until: Date | null },
): Promise<void> {
  await client.workflow.start<WebhookRecoveryWorkflow>(WEBHOOK_RECOVERY_WORKFLOW, {
    workflowId: webhookRecoveryWorkflowId(recoveryId),
    taskQueue: taskQueues(settings).webhooks,
    args: [{ recoveryId }],
    ...(about && {
      staticSummary: `recovery of ${about.eventsTotal} failed events to ${about.endpointUrl}`,
      staticDetails: [
        `**Webhook recovery** \`${recoveryId}\`: ${about.eventsTotal} events to ${about.endpointUrl}`,
        '',
        `- period: ${about.since.toISOString()} to ${about.until?.toISOString() ?? 'the request'}`,
        '- sent again oldest first, 10 per second, each by a `webhook-delivery-<deliveryId>` child',
      ].join('\n'),
    }),
  });
}

/** A running recovery older than this whose workflow Temporal does not know was never started. */
export const RECOVERY_START_GRACE_MS = 60_000;

/**
 * Ends the endpoint's running recovery if its workflow was never started (the API process that
 * made it stopped between the commit and the start): `stopped`, `not_started`. True when there
 * is no running recovery any more.
 */
export async function endUnstartedRecovery(
  em: EntityManager,
  client: Client,
  endpointId: string,
  now: Date,
): Promise<boolean> {
  const running = await em.findOne(WebhookRecovery, { endpoint: endpointId, status: 'running' });
  if (!running) return true;
  if (now.getTime() - running.createdAt.getTime() < RECOVERY_START_GRACE_MS) return false;
  try {
    await client.workflow.getHandle(webhookRecoveryWorkflowId(running.id)).describe();
    return false;
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  const ended = await em.nativeUpdate(
    WebhookRecovery,
    { id: running.id, status: 'running' },
    { status: 'stopped', stopReason: 'not_started', completedAt: now, updatedAt: now },
  );
  return ended === 1;
}
