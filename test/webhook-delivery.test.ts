import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, beforeEach, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker, WorkflowBundle } from '@temporalio/worker';
import { deliveryTrigger } from '../api/presenters/webhook-delivery.js';
import {
  Event,
  type EventType,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookRecovery,
} from '../db/entities/index.js';
import { createWorkspace } from '../lib/accounts.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import {
  EVENT_FAN_OUT_WORKFLOW,
  type EventFanOutWorkflow,
  eventFanOutWorkflowId,
  webhookDeliveryWorkflowId,
  webhookRecoveryWorkflowId,
} from '../lib/temporal/workflow-contracts.js';
import { recordPendingDeliveries, recordResend, subscribedEndpointIds } from '../lib/webhooks/deliveries.js';
import { createRecovery } from '../lib/webhooks/recovery.js';
import { verifyWebhookSignature } from '../lib/webhooks/verify-signature.js';
import { createWebhooksWorker } from '../workers/webhooks-worker.js';
import type { eventFanOutWorkflow } from '../workflows/event-fan-out.js';
import type { webhookDeliveryWorkflow } from '../workflows/webhook-delivery.js';
import type { webhookRecoveryWorkflow } from '../workflows/webhook-recovery.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { keepHistory } from './support/kept-histories.js';
import { installQuietRuntime } from './support/quiet-logger.js';
import { createTimeSkippingEnvironment } from './support/temporal.js';
import { insertEndpoint, insertEvent } from './support/webhook-fixtures.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { bundleWorkflows } from './support/workflow-bundles.js';

installQuietRuntime();

// The delivery workflows on the time-skipping test server: the retry schedule, pause, resume
// and disable, against a real local receiver and a real database.

let db: TestDatabase;
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;
let receiver: WebhookReceiver;
let worker: Worker;
let workerRun: Promise<void>;
const settings = {
  temporalNamespace: 'default',
  taskQueuePrefix: `t-${randomBytes(4).toString('hex')}-`,
  webhooksAllowPrivateTargets: true,
};
const queue = taskQueues(settings).webhooks;

before(async () => {
  [db, bundle, receiver] = await Promise.all([freshDatabase(), bundleWorkflows(), startWebhookReceiver()]);
  // The skipped time at which each request arrives, to check the wait between attempts.
  receiver.onRequest = () => env.currentTimeMs();
});

// A test server per test: after abandoned children, one server stops skipping time for later
// workflows (temporalio/sdk-typescript#1101).
beforeEach(async () => {
  env = await createTimeSkippingEnvironment();
  worker = await createWebhooksWorker({
    connection: env.nativeConnection,
    settings,
    orm: db.orm,
    workflowBundle: bundle,
  });
  workerRun = worker.run();
});
afterEach(async () => {
  worker.shutdown();
  await workerRun;
  await env.teardown();
});

after(async () => {
  await receiver?.close();
  await db?.close();
});

/** Runs `fn` while the worker of the webhooks queue polls (one worker for the whole file). */
async function withWorker<T>(fn: () => Promise<T>): Promise<T> {
  return fn();
}

async function newWorkspace() {
  return createWorkspace(db.orm.em.fork(), { name: `ws-${randomBytes(3).toString('hex')}` });
}

/**
 * Starts the fan-out as the call workflow would, and waits for it and every delivery it started.
 * The fan-out is awaited by polling, not through result(): on the time-skipping server, awaiting
 * the result of a workflow that started abandoned children stops time skipping for later waits
 * (temporalio/sdk-typescript#1101).
 */
async function fanOut(eventId: string, options = { waitForDeliveries: true }) {
  const handle = await env.client.workflow.start<typeof eventFanOutWorkflow>('eventFanOutWorkflow', {
    workflowId: `event-fanout-${eventId}`,
    taskQueue: queue,
    args: [{ eventId }],
  });
  while ((await handle.describe()).status.name === 'RUNNING') await new Promise((r) => setTimeout(r, 20));
  const result = { deliveries: await db.orm.em.fork().count(WebhookDelivery, { event: eventId }) };
  const deliveries = await db.orm.em.fork().find(WebhookDelivery, { event: eventId });
  if (!options.waitForDeliveries) return { result, deliveries };
  await Promise.all(
    deliveries.map((d) => env.client.workflow.getHandle(webhookDeliveryWorkflowId(d.id)).result()),
  );
  return { result, deliveries: await db.orm.em.fork().find(WebhookDelivery, { event: eventId }) };
}

/** Delivers the event to its subscribed endpoints with delivery workflows started from here, no fan-out. */
async function deliverDirectly(eventId: string) {
  const em = db.orm.em.fork();
  const event = await em.findOneOrFail(Event, { id: eventId });
  const ids = await recordPendingDeliveries(em, event, await subscribedEndpointIds(em, event));
  await Promise.all(
    ids.map((deliveryId) =>
      env.client.workflow.execute<typeof webhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
        workflowId: webhookDeliveryWorkflowId(deliveryId),
        taskQueue: queue,
        args: [{ deliveryId }],
      }),
    ),
  );
  return db.orm.em.fork().find(WebhookDelivery, { event: eventId });
}

function requestsTo(path: string) {
  return receiver.requests.filter((r) => r.path === path);
}

test('a receiver that fails 4 times then succeeds gets 5 attempts on the 30 s, 2 min, 10 min, 1 h schedule', async () => {
  const ws = await newWorkspace();
  const em = db.orm.em.fork();
  const path = '/flaky';
  receiver.answer = (n, p) =>
    p === path && n <= 4
      ? { status: n === 4 ? 302 : 500, headers: { Location: 'https://elsewhere.example/' } }
      : { status: 204 };
  const endpoint = await insertEndpoint(em, {
    workspaceId: ws.id,
    url: receiver.url + path,
    events: ['call.started'],
  });
  const event = await insertEvent(em, { workspaceId: ws.id, type: 'call.started' });

  const { deliveries } = await withWorker(() => fanOut(event.id));

  const got = requestsTo(path);
  assert.equal(got.length, 5);
  for (const r of got) {
    assert.equal(r.headers['service-event-id'], event.id, 'the event id stays the same on every retry');
    assert.ok(r.rawBody.equals(Buffer.from(event.body, 'utf8')), 'the exact stored bytes are sent');
    assert.ok(
      verifyWebhookSignature({
        rawBody: r.rawBody,
        signatureHeader: r.headers['service-signature'] as string,
        secret: endpoint.secret,
      }).ok,
    );
  }
  const gaps = got.slice(1).map((r, i) => ((r.note as number) - (got[i]!.note as number)) / 1000);
  const expected = [30, 120, 600, 3600];
  for (const [i, gap] of gaps.entries()) {
    assert.ok(gap >= expected[i]! && gap < expected[i]! + 5, `gap ${i + 1} was ${gap} s`);
  }

  assert.equal(deliveries.length, 1);
  const [delivery] = deliveries;
  assert.equal(delivery!.status, 'delivered');
  assert.equal(delivery!.attempts, 5);
  assert.equal(delivery!.responseStatus, 204);
  assert.equal(delivery!.error, null);
  assert.ok(delivery!.deliveredAt);
  assert.equal(delivery!.nextAttemptAt, null);
  const after = await db.orm.em.fork().findOneOrFail(WebhookEndpoint, { id: endpoint.id });
  assert.equal(after.failingSince, null, 'a success ends the failing run');
  // Committed for the replay test (test/support/kept-histories.ts).
  keepHistory(
    'event-fan-out',
    await env.client.workflow.getHandle(`event-fanout-${event.id}`).fetchHistory(),
  );
  keepHistory(
    'webhook-delivery',
    await env.client.workflow.getHandle(webhookDeliveryWorkflowId(delivery!.id)).fetchHistory(),
  );
});

test('a receiver that never succeeds gets exactly 5 attempts, then the delivery is failed', async () => {
  const ws = await newWorkspace();
  const em = db.orm.em.fork();
  const path = '/down';
  receiver.answer = (_n, p) => (p === path ? { status: 503, body: 'maintenance' } : { status: 200 });
  const endpoint = await insertEndpoint(em, {
    workspaceId: ws.id,
    url: receiver.url + path,
    events: ['call.failed'],
  });
  const event = await insertEvent(em, { workspaceId: ws.id, type: 'call.failed' });

  const { deliveries } = await withWorker(() => fanOut(event.id));

  assert.equal(requestsTo(path).length, 5);
  const [delivery] = deliveries;
  const run = await env.client.workflow.getHandle(webhookDeliveryWorkflowId(delivery!.id)).describe();
  assert.equal(run.status.name, 'COMPLETED', 'the delivery is over: no attempt can follow');
  assert.equal(delivery!.status, 'failed');
  assert.equal(delivery!.attempts, 5);
  assert.equal(delivery!.responseStatus, 503);
  assert.equal(delivery!.error, 'HTTP 503: maintenance');
  assert.equal(delivery!.deliveredAt, null);
  const after = await db.orm.em.fork().findOneOrFail(WebhookEndpoint, { id: endpoint.id });
  assert.ok(after.failingSince, 'the failing run is recorded');
  assert.equal(after.status, 'active', 'one failed delivery does not disable');
});

test('only active endpoints of the workspace subscribed to the type get a delivery', async () => {
  const ws = await newWorkspace();
  const other = await newWorkspace();
  const em = db.orm.em.fork();
  receiver.answer = () => ({ status: 200 });
  const subscribed = await insertEndpoint(em, {
    workspaceId: ws.id,
    url: `${receiver.url}/sub`,
    events: ['call.completed', 'call.failed'],
  });
  await insertEndpoint(em, {
    workspaceId: ws.id,
    url: `${receiver.url}/other-type`,
    events: ['call.started'],
  });
  await insertEndpoint(em, {
    workspaceId: ws.id,
    url: `${receiver.url}/paused`,
    events: ['call.completed'],
    status: 'paused',
  });
  await insertEndpoint(em, {
    workspaceId: ws.id,
    url: `${receiver.url}/disabled`,
    events: ['call.completed'],
    status: 'disabled',
  });
  await insertEndpoint(em, {
    workspaceId: other.id,
    url: `${receiver.url}/other-ws`,
    events: ['call.completed'],
  });
  const event = await insertEvent(em, { workspaceId: ws.id, type: 'call.completed' });

  const { result, deliveries } = await withWorker(() => fanOut(event.id));

  assert.deepEqual(result, { deliveries: 1 });
  assert.deepEqual(
    deliveries.map((d) => d.endpoint),
    [subscribed.id],
  );
  for (const path of ['/other-type', '/paused', '/disabled', '/other-ws'])
    assert.equal(requestsTo(path).length, 0, path);
  assert.equal(requestsTo('/sub').length, 1);
});

test('a paused endpoint receives nothing; events while paused are skipped; after resume the next event arrives', async () => {
  const ws = await newWorkspace();
  const em = db.orm.em.fork();
  const path = '/pausable';
  receiver.answer = (n, p) => (p === path && n === 1 ? { status: 500 } : { status: 200 });
  const endpoint = await insertEndpoint(em, {
    workspaceId: ws.id,
    url: receiver.url + path,
    events: ['call.started'],
  });
  const first = await insertEvent(em, { workspaceId: ws.id, type: 'call.started' });

  await withWorker(async () => {
    // The first attempt fails; the endpoint is paused before the retry is due.
    await env.client.workflow.start<EventFanOutWorkflow>(EVENT_FAN_OUT_WORKFLOW, {
      workflowId: eventFanOutWorkflowId(first.id),
      taskQueue: queue,
      args: [{ eventId: first.id }],
    });
    await receiver.waitForRequests(receiver.requests.length + 1);
    await db.orm.em.fork().nativeUpdate(WebhookEndpoint, { id: endpoint.id }, { status: 'paused' });
    const [pending] = await db.orm.em.fork().find(WebhookDelivery, { event: first.id });
    assert.deepEqual(await env.client.workflow.getHandle(webhookDeliveryWorkflowId(pending!.id)).result(), {
      outcome: 'stopped',
      attempts: 2,
    });

    const whilePaused = await insertEvent(db.orm.em.fork(), { workspaceId: ws.id, type: 'call.started' });
    const paused = await fanOut(whilePaused.id);
    assert.equal(paused.deliveries.length, 0, 'an event while paused is not queued for the endpoint');

    await db.orm.em.fork().nativeUpdate(WebhookEndpoint, { id: endpoint.id }, { status: 'active' });
    const next = await insertEvent(db.orm.em.fork(), { workspaceId: ws.id, type: 'call.started' });
    const resumed = await fanOut(next.id);
    assert.equal(resumed.deliveries[0]!.status, 'delivered');
  });

  const got = requestsTo(path);
  assert.equal(got.length, 2, 'one failed attempt before the pause, then the event after resume');
  const [stopped] = await db.orm.em.fork().find(WebhookDelivery, { event: first.id });
  assert.equal(stopped!.status, 'failed');
  assert.equal(stopped!.attempts, 1);
  assert.equal(stopped!.error, 'not sent: endpoint paused');
});

// Each of the next two tests runs one delivery workflow on its own test server: the skipped
// clock is then exactly the retry schedule, which is what the 5-day rule is measured against.
const hour = 3600_000;

test('an endpoint failing for less than 5 days stays active through another failed delivery', async () => {
  const ws = await newWorkspace();
  const em = db.orm.em.fork();
  receiver.answer = (_n, p) => (p.startsWith('/dying') ? { status: 500 } : { status: 200 });
  const now = await env.currentTimeMs();
  const young = await insertEndpoint(em, {
    workspaceId: ws.id,
    url: `${receiver.url}/dying-young`,
    events: ['call.completed'],
  });
  await em.nativeUpdate(WebhookEndpoint, { id: young.id }, { failingSince: new Date(now - 96 * hour) });
  const event = await insertEvent(em, { workspaceId: ws.id, type: 'call.completed' });

  const [delivery] = await deliverDirectly(event.id);

  assert.equal(delivery.status, 'failed');
  assert.equal(delivery.attempts, 5);
  const youngAfter = await db.orm.em.fork().findOneOrFail(WebhookEndpoint, { id: young.id });
  assert.equal(youngAfter.status, 'active');
  assert.equal(youngAfter.failingSince!.getTime(), now - 96 * hour, 'the failing run keeps its start');
});

test('an endpoint whose every attempt has failed for 5 days is disabled and gets nothing more', async () => {
  const ws = await newWorkspace();
  const em = db.orm.em.fork();
  receiver.answer = (_n, p) => (p.startsWith('/dying') ? { status: 500 } : { status: 200 });
  const now = await env.currentTimeMs();
  // Failing for 5 days less 30 minutes: the run crosses 5 days during this delivery's retries.
  const old = await insertEndpoint(em, {
    workspaceId: ws.id,
    url: `${receiver.url}/dying-old`,
    events: ['call.completed'],
  });
  await em.nativeUpdate(
    WebhookEndpoint,
    { id: old.id },
    { failingSince: new Date(now - 120 * hour + hour / 2) },
  );
  const event = await insertEvent(em, { workspaceId: ws.id, type: 'call.completed' });

  const [oldDelivery] = await deliverDirectly(event.id);

  const oldAfter = await db.orm.em.fork().findOneOrFail(WebhookEndpoint, { id: old.id });
  assert.equal(oldAfter.status, 'disabled');
  assert.ok(oldAfter.disabledAt!.getTime() - oldAfter.failingSince!.getTime() >= 120 * hour);
  // Attempts at +0, +30 s, +2.5 min, +12.5 min fail inside 5 days; +72.5 min crosses the line
  // and disables the endpoint, so that attempt is the last.
  assert.equal(oldDelivery.status, 'failed');
  assert.equal(oldDelivery.attempts, 5);
  assert.equal(requestsTo('/dying-old').length, 5);

  // A disabled endpoint gets no delivery of the next event; an active subscriber still does.
  const healthy = await insertEndpoint(db.orm.em.fork(), {
    workspaceId: ws.id,
    url: `${receiver.url}/healthy-after-disable`,
    events: ['call.completed'],
  });
  const next = await insertEvent(db.orm.em.fork(), { workspaceId: ws.id, type: 'call.completed' });
  const later = await withWorker(() => fanOut(next.id, { waitForDeliveries: false }));
  assert.deepEqual(
    later.deliveries.map((d) => d.endpoint),
    [healthy.id],
  );
  assert.equal(requestsTo('/dying-old').length, 5);
});

test('a pending delivery stops when its endpoint is disabled before the retry', async () => {
  const ws = await newWorkspace();
  const em = db.orm.em.fork();
  const path = '/disabled-mid-way';
  receiver.answer = (_n, p) => (p === path ? { status: 500 } : { status: 200 });
  const endpoint = await insertEndpoint(em, {
    workspaceId: ws.id,
    url: receiver.url + path,
    events: ['call.started'],
  });
  const event = await insertEvent(em, { workspaceId: ws.id, type: 'call.started' });
  await withWorker(async () => {
    await env.client.workflow.start<EventFanOutWorkflow>(EVENT_FAN_OUT_WORKFLOW, {
      workflowId: eventFanOutWorkflowId(event.id),
      taskQueue: queue,
      args: [{ eventId: event.id }],
    });
    await receiver.waitForRequests(receiver.requests.length + 1);
    await db.orm.em.fork().nativeUpdate(WebhookEndpoint, { id: endpoint.id }, { status: 'disabled' });
    const [pending] = await db.orm.em.fork().find(WebhookDelivery, { event: event.id });
    await env.client.workflow.getHandle(webhookDeliveryWorkflowId(pending!.id)).result();
  });
  const [delivery] = await db.orm.em.fork().find(WebhookDelivery, { event: event.id });
  assert.equal(delivery!.status, 'failed');
  assert.equal(delivery!.error, 'not sent: endpoint disabled');
  assert.equal(requestsTo(path).length, 1);
});

// ── Resend and recover (POST …/resend, POST …/recover; the API end to end is in
// test/webhooks-recovery.test.ts) ─────────────────────────────────────────────────────────────

/** The event's own delivery to the endpoint, logged as the retry schedule would leave it. */
async function loggedDelivery(
  endpointId: string,
  event: Event,
  status: 'failed' | 'delivered' | 'pending',
): Promise<WebhookDelivery> {
  const em = db.orm.em.fork();
  const [id] = await recordPendingDeliveries(em, event, [endpointId]);
  await em.nativeUpdate(
    WebhookDelivery,
    { id },
    status === 'pending'
      ? {}
      : { status, attempts: 5, error: status === 'failed' ? 'HTTP 503: down' : null, responseStatus: 503 },
  );
  return db.orm.em.fork().findOneOrFail(WebhookDelivery, { id });
}

/** Polls until `check` answers (a value other than undefined). */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** An event that happened at `at` (recover sends in the order of this time). */
async function eventAt(workspaceId: string, at: Date, type: EventType = 'call.completed') {
  const em = db.orm.em.fork();
  const event = await insertEvent(em, { workspaceId, type });
  await em.nativeUpdate(Event, { id: event.id }, { createdAt: at });
  return db.orm.em.fork().findOneOrFail(Event, { id: event.id });
}

test('a resend reaches a paused endpoint and keeps the retry schedule; the log tells resend from retry', async () => {
  const ws = await newWorkspace();
  const em = db.orm.em.fork();
  const path = '/resend-while-paused';
  // Down for the 5 attempts of the event and the first attempt of the resend, then back.
  receiver.answer = (n, p) => (p === path && n <= 6 ? { status: 503 } : { status: 200 });
  const endpoint = await insertEndpoint(em, {
    workspaceId: ws.id,
    url: receiver.url + path,
    events: ['call.completed'],
  });
  const event = await insertEvent(em, { workspaceId: ws.id, type: 'call.completed' });
  const [original] = await deliverDirectly(event.id);
  assert.equal(original!.status, 'failed');
  assert.equal(deliveryTrigger(original!), 'retry');
  await db.orm.em.fork().nativeUpdate(WebhookEndpoint, { id: endpoint.id }, { status: 'paused' });

  const resent = await recordResend(db.orm.em.fork(), original!);
  assert.equal(deliveryTrigger(resent), 'resend', 'pending, before its first attempt');
  assert.ok(resent.createdAt > original!.createdAt);
  const result = await env.client.workflow.execute<typeof webhookDeliveryWorkflow>(
    'webhookDeliveryWorkflow',
    {
      workflowId: webhookDeliveryWorkflowId(resent.id),
      taskQueue: queue,
      args: [{ deliveryId: resent.id }],
    },
  );

  assert.deepEqual(result, { outcome: 'delivered', attempts: 2 });
  const got = requestsTo(path);
  assert.equal(got.length, 7);
  const gap = ((got[6]!.note as number) - (got[5]!.note as number)) / 1000;
  assert.ok(gap >= 30 && gap < 35, `the resend's retry came after ${gap} s`);
  for (const r of got.slice(5)) {
    assert.equal(r.headers['service-event-id'], event.id);
    assert.ok(r.rawBody.equals(Buffer.from(event.body, 'utf8')), 'the same bytes as the event');
  }
  const row = await db.orm.em.fork().findOneOrFail(WebhookDelivery, { id: resent.id });
  assert.deepEqual(
    [row.status, row.attempts, row.origin, row.resentFrom, deliveryTrigger(row)],
    ['delivered', 2, 'resend', original!.id, 'retry'],
  );
  const after = await db.orm.em.fork().findOneOrFail(WebhookEndpoint, { id: endpoint.id });
  assert.equal(after.status, 'paused', 'a resend changes no status');
});

test('a recovery sends again, oldest first and 10 per second, exactly the events whose last delivery failed', async () => {
  const ws = await newWorkspace();
  const em = db.orm.em.fork();
  const path = '/recovering';
  receiver.answer = () => ({ status: 200 });
  const endpoint = await insertEndpoint(em, {
    workspaceId: ws.id,
    url: receiver.url + path,
    events: ['call.completed', 'call.failed'],
  });
  const other = await insertEndpoint(em, {
    workspaceId: ws.id,
    url: `${receiver.url}/other-endpoint`,
    events: ['call.completed'],
  });
  const base = Date.now() - 3600_000;
  const at = (minute: number) => new Date(base + minute * 60_000);

  const expected: Event[] = [];
  for (let i = 0; i < 23; i++) {
    // Written newest first, so the order sent is the events' time, not the rows' order.
    const event = await eventAt(ws.id, at(40 - i), i % 3 ? 'call.completed' : 'call.failed');
    await loggedDelivery(endpoint.id, event, 'failed');
    expected.unshift(event);
  }
  // Last delivery failed after an earlier success: sent again.
  const resentAndFailed = await eventAt(ws.id, at(30.5));
  const delivered = await loggedDelivery(endpoint.id, resentAndFailed, 'delivered');
  const failedResend = await recordResend(db.orm.em.fork(), delivered);
  await db.orm.em
    .fork()
    .nativeUpdate(WebhookDelivery, { id: failedResend.id }, { status: 'failed', attempts: 5 });
  expected.splice(
    expected.findIndex((e) => e.createdAt > resentAndFailed.createdAt),
    0,
    resentAndFailed,
  );
  // Not sent again: delivered; failed and then resent with success; still pending; a test event;
  // before `since`; failed to another endpoint.
  await loggedDelivery(endpoint.id, await eventAt(ws.id, at(20.5)), 'delivered');
  const recovered = await eventAt(ws.id, at(21.5));
  const failedFirst = await loggedDelivery(endpoint.id, recovered, 'failed');
  const goodResend = await recordResend(db.orm.em.fork(), failedFirst);
  await db.orm.em.fork().nativeUpdate(WebhookDelivery, { id: goodResend.id }, { status: 'delivered' });
  await loggedDelivery(endpoint.id, await eventAt(ws.id, at(22.5)), 'pending');
  await loggedDelivery(endpoint.id, await eventAt(ws.id, at(23.5), 'webhook.test'), 'failed');
  await loggedDelivery(endpoint.id, await eventAt(ws.id, at(-5)), 'failed');
  await loggedDelivery(other.id, await eventAt(ws.id, at(24.5)), 'failed');

  const recovery = await db.orm.em
    .fork()
    .transactional((tx) => createRecovery(tx, { endpoint, since: at(0), until: null, now: new Date() }));
  assert.equal(recovery.eventsTotal, expected.length);

  // One batch per run: the workflow continues as new twice (10 + 10 + 4 events). It is followed in
  // the database: awaiting its result would let the server skip time while the deliveries it
  // started are on the wire, timing their attempts out (so they would be tried again).
  const handle = await env.client.workflow.start<typeof webhookRecoveryWorkflow>('webhookRecoveryWorkflow', {
    workflowId: webhookRecoveryWorkflowId(recovery.id),
    taskQueue: queue,
    args: [{ recoveryId: recovery.id, batchesPerRun: 1 }],
  });
  const row = await until('the recovery ends', async () => {
    const r = await db.orm.em.fork().findOneOrFail(WebhookRecovery, { id: recovery.id });
    return r.status === 'running' ? undefined : r;
  });
  assert.deepEqual([row.status, row.eventsSent, row.eventsTotal], ['completed', 24, 24]);
  assert.ok(row.completedAt);
  await until('every recovered event delivered', async () =>
    (await db.orm.em.fork().count(WebhookDelivery, { recovery: recovery.id, status: 'delivered' })) === 24
      ? true
      : undefined,
  );
  assert.deepEqual(await handle.result(), { status: 'completed', eventsSent: 4 }, 'the last of three runs');
  // Committed for the replay test (test/support/kept-histories.ts): a run that continued as new, and the last.
  keepHistory(
    'webhook-recovery-first-run',
    await env.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).fetchHistory(),
  );
  keepHistory('webhook-recovery-last-run', await handle.fetchHistory());
  // Started oldest first, one every 100 ms (the receiver may see neighbours swap when one
  // request is slower than the next).
  const logged = await db.orm.em.fork().find(WebhookDelivery, { recovery: recovery.id });
  const eventOf = new Map(logged.map((d) => [d.id, d.event]));
  const starts = await Promise.all(
    logged.map(async (d) => ({
      event: eventOf.get(d.id)!,
      at: (
        await env.client.workflow.getHandle(webhookDeliveryWorkflowId(d.id)).describe()
      ).startTime.getTime(),
    })),
  );
  starts.sort((a, b) => a.at - b.at);
  assert.deepEqual(
    starts.map((s) => s.event),
    expected.map((e) => e.id),
    'each event once, oldest first',
  );
  for (let i = 1; i < starts.length; i++) {
    const gap = starts[i]!.at - starts[i - 1]!.at;
    assert.ok(gap >= 95, `event ${i + 1} started ${gap} ms after the one before`);
  }
  const got = requestsTo(path);
  assert.deepEqual(
    got.map((r) => r.headers['service-event-id']).sort(),
    expected.map((e) => e.id).sort(),
    'each event received once',
  );
  for (const r of got) {
    const event = expected.find((e) => e.id === r.headers['service-event-id'])!;
    assert.ok(r.rawBody.equals(Buffer.from(event.body, 'utf8')));
  }
  assert.equal(requestsTo('/other-endpoint').length, 0);
  assert.equal(logged.length, 24);
  for (const d of logged) {
    assert.deepEqual([d.origin, d.status, deliveryTrigger(d)], ['recover', 'delivered', 'recover']);
    const failed = await db.orm.em.fork().findOneOrFail(WebhookDelivery, { id: d.resentFrom! });
    assert.deepEqual([failed.event, failed.status], [d.event, 'failed'], 'linked to the failed delivery');
  }
});

test('a recovery stops when its endpoint is paused; what it had handed over is not sent either', async () => {
  const ws = await newWorkspace();
  const em = db.orm.em.fork();
  const path = '/paused-while-recovering';
  receiver.answer = () => ({ status: 200 });
  const endpoint = await insertEndpoint(em, {
    workspaceId: ws.id,
    url: receiver.url + path,
    events: ['call.completed'],
  });
  const base = Date.now() - 3600_000;
  for (let i = 0; i < 25; i++) {
    await loggedDelivery(endpoint.id, await eventAt(ws.id, new Date(base + i * 1000)), 'failed');
  }
  const recovery = await db.orm.em
    .fork()
    .transactional((tx) =>
      createRecovery(tx, { endpoint, since: new Date(base - 1000), until: null, now: new Date() }),
    );
  const handle = await env.client.workflow.start<typeof webhookRecoveryWorkflow>('webhookRecoveryWorkflow', {
    workflowId: webhookRecoveryWorkflowId(recovery.id),
    taskQueue: queue,
    args: [{ recoveryId: recovery.id }],
  });
  // Nobody awaits the workflow yet, so its 100 ms pauses run on the wall clock: the first batch of
  // ten takes about a second, and the endpoint is paused while it goes out.
  const sentOf = async () =>
    (await db.orm.em.fork().findOneOrFail(WebhookRecovery, { id: recovery.id })).eventsSent;
  while ((await sentOf()) === 0) await new Promise((r) => setTimeout(r, 10));
  await receiver.waitForRequests(receiver.requests.length + 1);
  await db.orm.em.fork().nativeUpdate(WebhookEndpoint, { id: endpoint.id }, { status: 'paused' });

  // Followed in the database (see the test above), the workflow's result only once all is done.
  const row = await until('the recovery stops', async () => {
    const r = await db.orm.em.fork().findOneOrFail(WebhookRecovery, { id: recovery.id });
    return r.status === 'running' ? undefined : r;
  });
  assert.deepEqual(
    [row.status, row.stopReason, row.eventsSent, row.eventsTotal],
    ['stopped', 'endpoint_paused', 10, 25],
  );
  const made = await db.orm.em.fork().find(WebhookDelivery, { recovery: recovery.id });
  assert.equal(made.length, 10, 'the second batch was never taken');
  const after = await until('the handed-over deliveries end', async () => {
    const rows = await db.orm.em.fork().find(WebhookDelivery, { recovery: recovery.id });
    return rows.every((d) => d.status !== 'pending') ? rows : undefined;
  });
  const sent = after.filter((d) => d.status === 'delivered').length;
  const stopped = after.filter((d) => d.error === 'not sent: endpoint paused').length;
  assert.ok(sent >= 1 && sent < 10, `${sent} of the first batch went out before the pause`);
  assert.equal(sent + stopped, 10);
  assert.equal(requestsTo(path).length, sent);
  assert.deepEqual(await handle.result(), { status: 'stopped', eventsSent: 10 });
});
