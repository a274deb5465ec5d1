import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker, WorkflowBundle } from '@temporalio/worker';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Event, WebhookDelivery, WebhookEndpoint, WebhookRecovery } from '../db/entities/index.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import { webhookDeliveryWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { recordPendingDeliveries, subscribedEndpointIds } from '../lib/webhooks/deliveries.js';
import { verifyWebhookSignature } from '../lib/webhooks/verify-signature.js';
import { createWebhooksWorker } from '../workers/webhooks-worker.js';
import type { webhookDeliveryWorkflow } from '../workflows/webhook-delivery.js';
import { type ApiClient, type ApiResponse, createFixture, startApi, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { installQuietRuntime } from './support/quiet-logger.js';
import { createTimeSkippingEnvironment } from './support/temporal.js';
import { insertEvent } from './support/webhook-fixtures.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { bundleWorkflows } from './support/workflow-bundles.js';

installQuietRuntime();

// Resend and recover end to end (docs/webhooks.md "Resend and recover"): the API, the webhooks
// worker and a real local receiver that goes down and comes back, on the time-skipping test
// server, so the 5-attempt retry schedule (over an hour) that fails the deliveries while the
// receiver is down costs seconds. A fresh test server per test (temporalio/sdk-typescript#1101).

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

let db: TestDatabase;
let bundle: WorkflowBundle;
let receiver: WebhookReceiver;
let env: TestWorkflowEnvironment;
let worker: Worker;
let workerRun: Promise<void>;
let api: TestApi;
let owner: ApiClient;
let workspaceId: string;
const settings = {
  temporalNamespace: 'default',
  taskQueuePrefix: `whr-${randomBytes(4).toString('hex')}-`,
  webhooksAllowPrivateTargets: true,
};
const queue = taskQueues(settings).webhooks;
// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as plain JSON
let openApi: any;

before(async () => {
  [db, bundle, receiver] = await Promise.all([freshDatabase(), bundleWorkflows(), startWebhookReceiver()]);
  api = await startApi({ orm: db.orm, settings, temporal: async () => env.client });
  const fixture = await createFixture(db.orm, { role: 'owner', requestsPerSecond: 10_000 });
  owner = api.client(fixture.secret);
  workspaceId = fixture.workspaceId;
  openApi = (await api.client().get('/openapi.json')).body;
});

beforeEach(async () => {
  env = await createTimeSkippingEnvironment();
  worker = await createWebhooksWorker({
    connection: env.nativeConnection,
    settings,
    orm: db.orm,
    workflowBundle: bundle,
  });
  workerRun = worker.run();
  receiver.answer = () => ({ status: 200 });
  await receiver.up(); // a test that failed while its receiver was down leaves it down
});

afterEach(async () => {
  worker.shutdown();
  await workerRun;
  await env.teardown();
});

after(async () => {
  await api?.close();
  await receiver?.close();
  await db?.close();
});

const HOUR = 3600_000;

async function createEndpoint(path: string, events: string[] = ['call.completed']) {
  const res = await owner.post('/webhooks', { url: receiver.url + path, events });
  assert.equal(res.status, 201, res.text);
  return res.body as { id: string; secret: string };
}

function requestsTo(path: string) {
  return receiver.requests.filter((r) => r.path === path);
}

/** Events of the workspace that happened `minutesAgo` (in that order). */
async function eventsAt(minutesAgo: number[]): Promise<Event[]> {
  const events: Event[] = [];
  for (const minutes of minutesAgo) {
    const em = db.orm.em.fork();
    const event = await insertEvent(em, { workspaceId, type: 'call.completed' });
    await em.nativeUpdate(Event, { id: event.id }, { createdAt: new Date(Date.now() - minutes * 60_000) });
    events.push(await db.orm.em.fork().findOneOrFail(Event, { id: event.id }));
  }
  return events;
}

/**
 * Each event to its subscribed endpoints through every attempt, as the fan-out would, one event
 * at a time (while one workflow's timer is skipped, another's activity on the wire would see its
 * timeouts pass too). Once a workflow it waits for has ended, the test server moves its clock on
 * by ten years; the endpoints' failing runs are cleared in between so that the 5-day rule does not
 * disable them.
 */
async function deliverAll(events: Event[]) {
  for (const event of events) {
    const em = db.orm.em.fork();
    const endpointIds = await subscribedEndpointIds(em, event);
    for (const deliveryId of await recordPendingDeliveries(em, event, endpointIds)) {
      await env.client.workflow.execute<typeof webhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
        workflowId: webhookDeliveryWorkflowId(deliveryId),
        taskQueue: queue,
        args: [{ deliveryId }],
      });
    }
    await db.orm.em
      .fork()
      .nativeUpdate(WebhookEndpoint, { id: { $in: endpointIds } }, { failingSince: null });
  }
}

/** A failed delivery of each event to the endpoint, logged as the retry schedule leaves it. */
async function logFailed(endpointId: string, events: Event[]) {
  for (const event of events) {
    const em = db.orm.em.fork();
    const [id] = await recordPendingDeliveries(em, event, [endpointId]);
    await em.nativeUpdate(WebhookDelivery, { id }, { status: 'failed', attempts: 5, error: 'HTTP 503' });
  }
}

/** Polls until `check` answers (a value other than undefined). */
async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

// Deliveries and recoveries that run beside others are followed in the database, not by awaiting
// their workflows: awaiting a result lets the test server skip time, and a skip while another
// workflow's activity is on the wire times that activity out, so it would be tried again.

/** The delivery's end, from its log entry. */
const finished = (deliveryId: string) =>
  waitFor(`delivery ${deliveryId}`, async () => {
    const d = await db.orm.em.fork().findOne(WebhookDelivery, { id: deliveryId });
    return d && d.status !== 'pending' ? { outcome: d.status, attempts: d.attempts } : undefined;
  });

/** The recovery's end, from its row. */
const recoveryEnded = (recoveryId: string) =>
  waitFor(`recovery ${recoveryId}`, async () => {
    const r = await db.orm.em.fork().findOne(WebhookRecovery, { id: recoveryId });
    return r && r.status !== 'running' ? { status: r.status, eventsSent: r.eventsSent } : undefined;
  });

/** The events of these deliveries in the order their workflows started (recover's order). */
async function eventsInStartOrder(deliveryIds: string[]): Promise<string[]> {
  const started = await Promise.all(
    deliveryIds.map(async (id) => ({
      event: await eventOf(id),
      at: (await env.client.workflow.getHandle(webhookDeliveryWorkflowId(id)).describe()).startTime.getTime(),
    })),
  );
  return started.sort((a, b) => a.at - b.at).map((s) => s.event);
}

/** The delivery log of an endpoint (newest first), with query filters. */
async function log(endpointId: string, query = '') {
  const res = await owner.get(`/webhooks/${endpointId}/deliveries?limit=100${query}`);
  assert.equal(res.status, 200, res.text);
  return res.body.data as {
    id: string;
    status: string;
    trigger: string;
    attempts: number;
    error: string | null;
    resent_from: string | null;
    recovery_id: string | null;
    event_type: string;
  }[];
}

const eventOf = async (deliveryId: string) =>
  (await db.orm.em.fork().findOneOrFail(WebhookDelivery, { id: deliveryId })).event;

/** A real answer matches what the OpenAPI document says of that operation and status. */
function assertDocumented(path: string, method: string, res: ApiResponse) {
  const ajv = new Ajv2020({ strict: true, strictRequired: false });
  addFormats(ajv);
  ajv.addSchema(openApi.components.schemas.Error, '#/components/schemas/Error');
  const response = openApi.paths[path]?.[method]?.responses[res.status];
  assert.ok(response, `${method} ${path} does not document ${res.status}`);
  const schema = response.content['application/json'].schema;
  const validate = ajv.compile(schema.$ref ? { $ref: '#/components/schemas/Error' } : schema);
  assert.ok(validate(res.body), `${method} ${path} ${res.status}: ${JSON.stringify(validate.errors)}`);
}

describe('a receiver that was down', () => {
  test('resend one delivery, recover the rest oldest first; the log links each to the failed one', async () => {
    const path = '/down-and-back';
    const endpoint = await createEndpoint(path);
    await receiver.down();
    const events = await eventsAt([50, 40, 30, 20]);
    await deliverAll(events);
    assert.equal(requestsTo(path).length, 0);
    const failed = await log(endpoint.id);
    assert.equal(failed.length, 4);
    for (const d of failed) {
      assert.deepEqual(
        [d.status, d.attempts, d.trigger, d.resent_from, d.recovery_id],
        ['failed', 5, 'retry', null, null],
      );
      assert.match(d.error!, /ECONNREFUSED|refused/);
    }
    const originalOf = new Map<string, string>();
    for (const d of failed) originalOf.set(await eventOf(d.id), d.id);

    await receiver.up();
    const rotated = await owner.post(`/webhooks/${endpoint.id}/rotate-secret`);
    const secret = rotated.body.secret as string;

    // Resend the second event's delivery; a retry with the same key gets the same new delivery.
    const original = originalOf.get(events[1]!.id)!;
    const key = `resend-${randomUUID()}`;
    const resent = await owner.post(`/webhooks/${endpoint.id}/deliveries/${original}/resend`, undefined, {
      'Idempotency-Key': key,
    });
    assert.equal(resent.status, 202, resent.text);
    assertDocumented('/webhooks/{webhook_id}/deliveries/{delivery_id}/resend', 'post', resent);
    assert.deepEqual(
      { ...resent.body, id: undefined, created_at: undefined },
      {
        object: 'webhook_delivery',
        id: undefined,
        event_type: 'call.completed',
        status: 'pending',
        response_status: null,
        attempts: 0,
        error: null,
        trigger: 'resend',
        resent_from: original,
        recovery_id: null,
        created_at: undefined,
        delivered_at: null,
      },
    );
    const replayed = await owner.post(`/webhooks/${endpoint.id}/deliveries/${original}/resend`, undefined, {
      'Idempotency-Key': key,
    });
    assert.equal(replayed.status, 202);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.equal(replayed.body.id, resent.body.id);
    assert.deepEqual(await finished(resent.body.id), { outcome: 'delivered', attempts: 1 });
    assert.equal(await db.orm.em.fork().count(WebhookDelivery, { resentFrom: original }), 1, 'resent once');

    // Recover the period: the three events whose last delivery failed, oldest first.
    const since = new Date(Date.now() - HOUR).toISOString();
    // A second recovery asked for while the first runs is refused. The two are sent together, so
    // one is admitted while the other runs (it pauses 100 ms between events) however slow the
    // machine is to answer; the one admitted is `started`, its key the one replayed below.
    const keys = [`recover-${randomUUID()}`, `recover-${randomUUID()}`];
    const asked = await Promise.all(
      keys.map((key) =>
        owner.post(`/webhooks/${endpoint.id}/recover`, { since }, { 'Idempotency-Key': key }),
      ),
    );
    const winner = asked.findIndex((answer) => answer.status === 202);
    assert.ok(winner >= 0, asked.map((answer) => answer.text).join('\n'));
    const [started, second, recoverKey] = [asked[winner]!, asked[1 - winner]!, keys[winner]!];
    assert.equal(started.status, 202, started.text);
    assertDocumented('/webhooks/{webhook_id}/recover', 'post', started);
    assert.deepEqual(
      { ...started.body, id: undefined, created_at: undefined },
      {
        object: 'webhook_recovery',
        id: undefined,
        webhook_id: endpoint.id,
        status: 'running',
        stop_reason: null,
        since,
        until: null,
        events_total: 3,
        events_sent: 0,
        created_at: undefined,
        completed_at: null,
      },
    );
    assertApiError(second, 409, 'recovery_in_progress', 'webhook_id');
    assertDocumented('/webhooks/{webhook_id}/recover', 'post', second);

    assert.deepEqual(await recoveryEnded(started.body.id), { status: 'completed', eventsSent: 3 });
    const followed = await owner.get(`/webhooks/${endpoint.id}/recoveries/${started.body.id}`);
    assert.equal(followed.status, 200);
    assertDocumented('/webhooks/{webhook_id}/recoveries/{recovery_id}', 'get', followed);
    assert.deepEqual(
      [followed.body.status, followed.body.events_total, followed.body.events_sent],
      ['completed', 3, 3],
    );
    assert.ok(followed.body.completed_at);

    const recoveredLog = await log(endpoint.id, '&trigger=recover');
    assert.equal(recoveredLog.length, 3);
    await Promise.all(recoveredLog.map((d) => finished(d.id)));
    const got = requestsTo(path);
    assert.deepEqual(
      got.map((r) => r.headers['service-event-id']).sort(),
      [events[1]!.id, events[0]!.id, events[2]!.id, events[3]!.id].sort(),
    );
    assert.equal(got[0]!.headers['service-event-id'], events[1]!.id, 'the resend came first');
    assert.deepEqual(
      await eventsInStartOrder(recoveredLog.map((d) => d.id)),
      [events[0]!.id, events[2]!.id, events[3]!.id],
      'recovered oldest first',
    );
    for (const r of got) {
      const event = events.find((e) => e.id === r.headers['service-event-id'])!;
      assert.ok(r.rawBody.equals(Buffer.from(event.body, 'utf8')), 'the event as first sent, byte for byte');
      const signature = r.headers['service-signature'] as string;
      assert.ok(verifyWebhookSignature({ rawBody: r.rawBody, signatureHeader: signature, secret }).ok);
      assert.equal(
        verifyWebhookSignature({ rawBody: r.rawBody, signatureHeader: signature, secret: endpoint.secret })
          .ok,
        false,
        'signed with the current secret only',
      );
    }
    const delivered = await log(endpoint.id, '&status=delivered');
    assert.equal(delivered.length, 4);
    for (const d of delivered) {
      assert.equal(d.resent_from, originalOf.get(await eventOf(d.id)), 'linked to the failed delivery');
      assert.equal(d.recovery_id, d.trigger === 'recover' ? started.body.id : null);
    }
    assert.deepEqual(
      (await log(endpoint.id, '&trigger=resend')).map((d) => d.id),
      [resent.body.id],
    );
    assert.equal((await log(endpoint.id, '&trigger=retry&status=failed')).length, 4, 'the originals stay');
    assert.equal((await log(endpoint.id, '&event_type=call.completed')).length, 8);
    assert.equal((await log(endpoint.id, '&event_type=call.failed')).length, 0);

    // The same key and body replay the first answer; another body under it is refused.
    const replay = await owner.post(
      `/webhooks/${endpoint.id}/recover`,
      { since },
      { 'Idempotency-Key': recoverKey },
    );
    assert.equal(replay.status, 202);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.body.id, started.body.id);
    assertApiError(
      await owner.post(
        `/webhooks/${endpoint.id}/recover`,
        { since: new Date(Date.now() - 2 * HOUR).toISOString() },
        { 'Idempotency-Key': recoverKey },
      ),
      409,
      'idempotency_key_reused',
      'Idempotency-Key',
    );

    // Nothing failed any more: a new recovery has nothing to send, and ends at once.
    const again = await owner.post(`/webhooks/${endpoint.id}/recover`, { since });
    assert.equal(again.status, 202, again.text);
    assert.equal(again.body.events_total, 0);
    await recoveryEnded(again.body.id);
    const empty = await owner.get(`/webhooks/${endpoint.id}/recoveries/${again.body.id}`);
    assert.deepEqual([empty.body.status, empty.body.events_sent], ['completed', 0]);
    assert.equal(requestsTo(path).length, 4);
  });

  test('until bounds the period', async () => {
    const path = '/bounded';
    const endpoint = await createEndpoint(path);
    const events = await eventsAt([50, 40, 30]);
    await logFailed(endpoint.id, events);
    const since = new Date(Date.now() - HOUR).toISOString();
    const until = new Date(Date.now() - 35 * 60_000).toISOString();
    const bounded = await owner.post(`/webhooks/${endpoint.id}/recover`, { since, until });
    assert.equal(bounded.status, 202, bounded.text);
    assert.deepEqual([bounded.body.events_total, bounded.body.until], [2, until]);
    await recoveryEnded(bounded.body.id);
    const recovered = await log(endpoint.id, '&trigger=recover');
    await Promise.all(recovered.map((d) => finished(d.id)));
    assert.deepEqual(await eventsInStartOrder(recovered.map((d) => d.id)), [events[0]!.id, events[1]!.id]);
    assert.equal(requestsTo(path).length, 2);
  });
});

describe('paused and disabled endpoints', () => {
  test('test events and resends reach them; recover refuses them with 422 endpoint_not_active', async () => {
    const path = '/on-hold';
    const endpoint = await createEndpoint(path);
    for (const status of ['paused', 'disabled'] as const) {
      if (status === 'paused') await owner.patch(`/webhooks/${endpoint.id}`, { status });
      else
        await db.orm.em
          .fork()
          .nativeUpdate(WebhookEndpoint, { id: endpoint.id }, { status, disabledAt: new Date() });
      const before = requestsTo(path).length;
      const sent = await owner.post(`/webhooks/${endpoint.id}/test`, { message: `while ${status}` });
      assert.equal(sent.status, 202, sent.text);
      assert.deepEqual(await finished(sent.body.id), { outcome: 'delivered', attempts: 1 });
      const resent = await owner.post(`/webhooks/${endpoint.id}/deliveries/${sent.body.id}/resend`);
      assert.equal(resent.status, 202, resent.text);
      assert.deepEqual(
        [resent.body.trigger, resent.body.resent_from, resent.body.event_type],
        ['resend', sent.body.id, 'webhook.test'],
      );
      assert.deepEqual(await finished(resent.body.id), { outcome: 'delivered', attempts: 1 });
      const got = requestsTo(path).slice(before);
      assert.equal(got.length, 2);
      assert.equal(
        got[0]!.headers['service-event-id'],
        got[1]!.headers['service-event-id'],
        'the same event',
      );
      assert.equal(JSON.parse(got[1]!.rawBody.toString('utf8')).data.message, `while ${status}`);

      const refused = await owner.post(`/webhooks/${endpoint.id}/recover`, {
        since: new Date(Date.now() - HOUR).toISOString(),
      });
      assertApiError(refused, 422, 'endpoint_not_active', 'webhook_id');
      assertDocumented('/webhooks/{webhook_id}/recover', 'post', refused);
      assert.equal((await owner.get(`/webhooks/${endpoint.id}`)).body.status, status, 'unchanged');
    }
    assert.equal(await db.orm.em.fork().count(WebhookRecovery, { endpoint: endpoint.id }), 0);
  });

  test('pausing the endpoint stops a running recovery', async () => {
    const path = '/paused-mid-way';
    const endpoint = await createEndpoint(path);
    // 25 events whose delivery failed (logged directly: the retry schedule is tested above).
    await logFailed(endpoint.id, await eventsAt(Array.from({ length: 25 }, (_, i) => 50 - i)));
    const started = await owner.post(`/webhooks/${endpoint.id}/recover`, {
      since: new Date(Date.now() - HOUR).toISOString(),
    });
    assert.equal(started.status, 202, started.text);
    assert.equal(started.body.events_total, 25);
    // Nobody awaits the workflow yet, so its 100 ms pauses run on the wall clock.
    for (;;) {
      const now = await owner.get(`/webhooks/${endpoint.id}/recoveries/${started.body.id}`);
      if (now.body.events_sent > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal((await owner.patch(`/webhooks/${endpoint.id}`, { status: 'paused' })).status, 200);
    assert.equal((await recoveryEnded(started.body.id)).status, 'stopped');
    const stopped = await owner.get(`/webhooks/${endpoint.id}/recoveries/${started.body.id}`);
    assert.deepEqual(
      [stopped.body.status, stopped.body.stop_reason, stopped.body.events_sent, stopped.body.events_total],
      ['stopped', 'endpoint_paused', 10, 25],
    );
    assert.ok(stopped.body.completed_at);
    const made = await log(endpoint.id, '&trigger=recover');
    await Promise.all(made.map((d) => finished(d.id)));
    assert.ok(requestsTo(path).length < 10, 'what was handed over after the pause was not sent');
    // A delivery the receiver took before the pause landed is that event's last delivery: it
    // succeeded, so the next recovery has one event fewer to send.
    const deliveredBeforePause = (await log(endpoint.id, '&trigger=recover')).filter(
      (d) => d.status === 'delivered',
    ).length;
    assert.equal(
      deliveredBeforePause,
      requestsTo(path).length,
      'each request the receiver took was delivered',
    );
    // Set active again, a new recovery may run.
    await owner.patch(`/webhooks/${endpoint.id}`, { status: 'active' });
    const next = await owner.post(`/webhooks/${endpoint.id}/recover`, {
      since: new Date(Date.now() - HOUR).toISOString(),
    });
    assert.equal(next.status, 202, next.text);
    assert.equal(
      next.body.events_total,
      25 - deliveredBeforePause,
      'every event whose last delivery failed, the paused ones too',
    );
    await recoveryEnded(next.body.id);
  });
});

describe('refusals', () => {
  test('recover: the period is checked (since at most 14 days back, until not before since)', async () => {
    const endpoint = await createEndpoint('/periods');
    const at = (ms: number) => new Date(Date.now() + ms).toISOString();
    const day = 24 * HOUR;
    const cases: [unknown, string, string][] = [
      [{ since: at(-15 * day) }, 'parameter_invalid', 'since'],
      [{ since: at(-14 * day - 60_000) }, 'parameter_invalid', 'since'],
      [{ since: at(HOUR) }, 'parameter_invalid', 'since'],
      [{ since: at(-HOUR), until: at(-2 * HOUR) }, 'parameter_invalid', 'until'],
      [{ since: '2026-11-23' }, 'parameter_invalid', 'since'],
      [{ since: 'yesterday' }, 'parameter_invalid', 'since'],
      [{ since: at(-HOUR), until: 5 }, 'parameter_invalid', 'until'],
      [{}, 'parameter_missing', 'since'],
      [{ since: at(-HOUR), events: ['call.completed'] }, 'parameter_unknown', 'events'],
    ];
    for (const [body, code, param] of cases) {
      const res = await owner.post(`/webhooks/${endpoint.id}/recover`, body);
      assertApiError(res, 400, code, param);
      assertDocumented('/webhooks/{webhook_id}/recover', 'post', res);
    }
    assertApiError(await owner.post(`/webhooks/${endpoint.id}/recover`), 400, 'parameter_missing', 'since');
    // 14 days less a minute is inside the window.
    const edge = await owner.post(`/webhooks/${endpoint.id}/recover`, { since: at(-14 * day + 60_000) });
    assert.equal(edge.status, 202, edge.text);
    await recoveryEnded(edge.body.id);
    assert.equal(await db.orm.em.fork().count(WebhookRecovery, { endpoint: endpoint.id }), 1);
  });

  test('other endpoints and workspaces are 404 with the right param; roles and scopes', async () => {
    const endpoint = await createEndpoint('/mine');
    const sibling = await createEndpoint('/sibling');
    const sent = await owner.post(`/webhooks/${endpoint.id}/test`);
    await finished(sent.body.id);
    const recovery = await owner.post(`/webhooks/${endpoint.id}/recover`, {
      since: new Date(Date.now() - HOUR).toISOString(),
    });
    await recoveryEnded(recovery.body.id);

    const resendPath = (webhookId: string, deliveryId: string) =>
      `/webhooks/${webhookId}/deliveries/${deliveryId}/resend`;
    assertApiError(
      await owner.post(resendPath(sibling.id, sent.body.id)),
      404,
      'resource_missing',
      'delivery_id',
    );
    assertApiError(
      await owner.post(resendPath(endpoint.id, randomUUID())),
      404,
      'resource_missing',
      'delivery_id',
    );
    assertApiError(
      await owner.post(resendPath(endpoint.id, 'nope')),
      400,
      'parameter_invalid',
      'delivery_id',
    );
    assertApiError(
      await owner.post(resendPath(randomUUID(), sent.body.id)),
      404,
      'resource_missing',
      'webhook_id',
    );
    assertApiError(
      await owner.post(resendPath(endpoint.id, sent.body.id), { now: true }),
      400,
      'parameter_unknown',
      'now',
    );
    const recoveryPath = (webhookId: string, recoveryId: string) =>
      `/webhooks/${webhookId}/recoveries/${recoveryId}`;
    const notFound = await owner.get(recoveryPath(sibling.id, recovery.body.id));
    assertApiError(notFound, 404, 'resource_missing', 'recovery_id');
    assertDocumented('/webhooks/{webhook_id}/recoveries/{recovery_id}', 'get', notFound);
    assertApiError(
      await owner.get(recoveryPath(endpoint.id, randomUUID())),
      404,
      'resource_missing',
      'recovery_id',
    );
    assertApiError(
      await owner.get(recoveryPath(endpoint.id, 'nope')),
      400,
      'parameter_invalid',
      'recovery_id',
    );

    const stranger = api.client((await createFixture(db.orm, { role: 'owner' })).secret);
    assertApiError(
      await stranger.post(resendPath(endpoint.id, sent.body.id)),
      404,
      'resource_missing',
      'webhook_id',
    );
    assertApiError(
      await stranger.post(`/webhooks/${endpoint.id}/recover`, { since: new Date().toISOString() }),
      404,
      'resource_missing',
      'webhook_id',
    );
    assertApiError(
      await stranger.get(recoveryPath(endpoint.id, recovery.body.id)),
      404,
      'resource_missing',
      'webhook_id',
    );

    for (const role of ['member', 'viewer'] as const) {
      const client = api.client((await createFixture(db.orm, { workspaceId, role })).secret);
      const refused = await client.post(resendPath(endpoint.id, sent.body.id));
      assertApiError(refused, 403, 'role_required');
      assertDocumented('/webhooks/{webhook_id}/deliveries/{delivery_id}/resend', 'post', refused);
      assertApiError(
        await client.post(`/webhooks/${endpoint.id}/recover`, { since: new Date().toISOString() }),
        403,
        'role_required',
      );
      assert.equal((await client.get(recoveryPath(endpoint.id, recovery.body.id))).status, 200, role);
      assert.equal((await client.get(`/webhooks/${endpoint.id}/deliveries?trigger=test`)).status, 200, role);
    }
    const reader = api.client(
      (await createFixture(db.orm, { workspaceId, scopes: ['webhooks:read'] })).secret,
    );
    assertApiError(await reader.post(resendPath(endpoint.id, sent.body.id)), 403, 'missing_scope');
    assertApiError(
      await reader.post(`/webhooks/${endpoint.id}/recover`, { since: new Date().toISOString() }),
      403,
      'missing_scope',
    );
    assert.equal((await reader.get(recoveryPath(endpoint.id, recovery.body.id))).status, 200);
    assertApiError(
      await owner.get(`/webhooks/${endpoint.id}/deliveries?trigger=later`),
      400,
      'parameter_invalid',
      'trigger',
    );
    assert.equal(
      await db.orm.em.fork().count(WebhookDelivery, { resentFrom: sent.body.id }),
      0,
      'nothing resent',
    );
  });

  test('when Temporal cannot be reached: 503, nothing recorded, and the key can be used again', async () => {
    const endpoint = await createEndpoint('/unqueued');
    const sent = await owner.post(`/webhooks/${endpoint.id}/test`);
    await finished(sent.body.id);
    await db.orm.em.fork().nativeUpdate(WebhookDelivery, { id: sent.body.id }, { status: 'failed' });
    const noTemporal = await startApi({
      orm: db.orm,
      settings,
      temporal: async () => {
        throw new Error('Temporal is down');
      },
    });
    const resendKey = `k-${randomUUID()}`;
    const recoverKey = `k-${randomUUID()}`;
    const since = new Date(Date.now() - HOUR).toISOString();
    try {
      const client = noTemporal.client((await createFixture(db.orm, { workspaceId })).secret);
      const resend = await client.post(
        `/webhooks/${endpoint.id}/deliveries/${sent.body.id}/resend`,
        undefined,
        {
          'Idempotency-Key': resendKey,
        },
      );
      assertApiError(resend, 503, 'upstream_unavailable');
      assertDocumented('/webhooks/{webhook_id}/deliveries/{delivery_id}/resend', 'post', resend);
      const recover = await client.post(
        `/webhooks/${endpoint.id}/recover`,
        { since },
        { 'Idempotency-Key': recoverKey },
      );
      assertApiError(recover, 503, 'upstream_unavailable');
      assertDocumented('/webhooks/{webhook_id}/recover', 'post', recover);
    } finally {
      await noTemporal.close();
    }
    assert.equal(await db.orm.em.fork().count(WebhookDelivery, { endpoint: endpoint.id }), 1);
    assert.equal(await db.orm.em.fork().count(WebhookRecovery, { endpoint: endpoint.id }), 0);
    // The same keys run anew once Temporal answers (the 503s were not stored).
    const resend = await owner.post(`/webhooks/${endpoint.id}/deliveries/${sent.body.id}/resend`, undefined, {
      'Idempotency-Key': resendKey,
    });
    assert.equal(resend.status, 202, resend.text);
    assert.equal(resend.headers.get('idempotent-replayed'), null);
    await finished(resend.body.id);
    const recover = await owner.post(
      `/webhooks/${endpoint.id}/recover`,
      { since },
      { 'Idempotency-Key': recoverKey },
    );
    assert.equal(recover.status, 202, recover.text);
    assert.equal(recover.body.events_total, 0, 'the test event is not recovered; nothing else failed');
    await recoveryEnded(recover.body.id);
  });

  test('a recovery whose workflow never started does not block the endpoint for good', async () => {
    const endpoint = await createEndpoint('/orphaned');
    const em = db.orm.em.fork();
    const orphan = em.create(WebhookRecovery, {
      id: randomUUID(),
      workspace: workspaceId,
      endpoint: endpoint.id,
      status: 'running',
      stopReason: null,
      since: new Date(Date.now() - HOUR),
      until: null,
      eventsTotal: 0,
      eventsSent: 0,
      createdAt: new Date(Date.now() - 30_000),
      updatedAt: new Date(),
      completedAt: null,
    });
    await em.flush();
    const since = new Date(Date.now() - HOUR).toISOString();
    // Younger than a minute: its API process may still be starting it.
    assertApiError(
      await owner.post(`/webhooks/${endpoint.id}/recover`, { since }),
      409,
      'recovery_in_progress',
      'webhook_id',
    );
    await db.orm.em
      .fork()
      .nativeUpdate(WebhookRecovery, { id: orphan.id }, { createdAt: new Date(Date.now() - 2 * 60_000) });
    const res = await owner.post(`/webhooks/${endpoint.id}/recover`, { since });
    assert.equal(res.status, 202, res.text);
    await recoveryEnded(res.body.id);
    const ended = await db.orm.em.fork().findOneOrFail(WebhookRecovery, { id: orphan.id });
    assert.deepEqual([ended.status, ended.stopReason], ['stopped', 'not_started']);
  });
});

test('the OpenAPI document lists the new operations with their statuses', () => {
  const ops: [string, string, string[]][] = [
    [
      '/webhooks/{webhook_id}/deliveries/{delivery_id}/resend',
      'post',
      ['202', '400', '401', '403', '404', '409', '429', '500', '503'],
    ],
    [
      '/webhooks/{webhook_id}/recover',
      'post',
      ['202', '400', '401', '403', '404', '409', '422', '429', '500', '503'],
    ],
    [
      '/webhooks/{webhook_id}/recoveries/{recovery_id}',
      'get',
      ['200', '400', '401', '403', '404', '429', '500', '503'],
    ],
    ['/webhooks/{webhook_id}/test', 'post', ['202', '400', '401', '403', '404', '429', '500', '503']],
  ];
  for (const [path, method, statuses] of ops) {
    const op = openApi.paths[path]?.[method];
    assert.ok(op, `${method} ${path}`);
    assert.deepEqual(Object.keys(op.responses).sort(), statuses.sort(), `${method} ${path}`);
  }
  const resend = openApi.paths['/webhooks/{webhook_id}/deliveries/{delivery_id}/resend'].post;
  assert.ok(resend.parameters.some((p: { name: string }) => p.name === 'Idempotency-Key'));
  assert.deepEqual(resend['x-required-roles'], ['owner', 'admin']);
  const trigger = openApi.paths['/webhooks/{webhook_id}/deliveries'].get.parameters.find(
    (p: { name: string }) => p.name === 'trigger',
  );
  assert.deepEqual(trigger.schema.enum, ['event', 'test', 'resend', 'recover', 'retry']);
});
