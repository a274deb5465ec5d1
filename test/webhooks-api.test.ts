import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { Event, WebhookDelivery, WebhookEndpoint } from '../db/entities/index.js';
import type { Settings } from '../lib/settings.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import { sendWebhook, TARGET_REFUSED } from '../lib/webhooks/sender.js';
import { URL_NOT_ALLOWED } from '../lib/webhooks/url-rules.js';
import { verifyWebhookSignature } from '../lib/webhooks/verify-signature.js';
import { createWebhooksWorker } from '../workers/webhooks-worker.js';
import { type ApiClient, createFixture, startApi, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { type SharedDevServer, sharedDevServer } from './support/temporal.js';
import { insertEvent } from './support/webhook-fixtures.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// Webhooks end to end: the API, the webhooks worker on a real Temporal dev server, PostgreSQL and
// a real local receiver. Private targets are allowed here (the receiver is on 127.0.0.1) except
// in the URL-rule tests, which run a second API with the guard on.

let db: TestDatabase;
let api: TestApi;
let guardedApi: TestApi;
let temporal: SharedDevServer;
let connection: NativeConnection;
let worker: Worker;
let workerRun: Promise<void>;
let receiver: WebhookReceiver;
let owner: ApiClient;
let ownerWorkspace: string;
const settings: Partial<Settings> = {
  taskQueuePrefix: `wh-${randomBytes(4).toString('hex')}-`,
  webhooksAllowPrivateTargets: true,
};

before(async () => {
  [db, temporal, receiver] = await Promise.all([freshDatabase(), sharedDevServer(), startWebhookReceiver()]);
  connection = await NativeConnection.connect({ address: temporal.address });
  worker = await createWebhooksWorker({
    connection,
    settings: {
      temporalNamespace: temporal.namespace,
      taskQueuePrefix: settings.taskQueuePrefix!,
      webhooksAllowPrivateTargets: true,
    },
    orm: db.orm,
  });
  workerRun = worker.run();
  api = await startApi({ orm: db.orm, settings: { ...settings, temporalNamespace: temporal.namespace } });
  guardedApi = await startApi({ orm: db.orm, settings: { ...settings, webhooksAllowPrivateTargets: false } });
  const fixture = await createFixture(db.orm, { role: 'owner' });
  owner = api.client(fixture.secret);
  ownerWorkspace = fixture.workspaceId;
});

after(async () => {
  worker?.shutdown();
  await workerRun;
  await connection?.close();
  await api?.close();
  await guardedApi?.close();
  await temporal?.close();
  await receiver?.close();
  await db?.close();
});

async function createEndpoint(client: ApiClient, path: string, events: string[] = ['call.started']) {
  const res = await client.post('/webhooks', { url: receiver.url + path, events, description: 'test' });
  assert.equal(res.status, 201, res.text);
  return res.body as { id: string; secret: string };
}

function requestsTo(path: string) {
  return receiver.requests.filter((r) => r.path === path);
}

async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Hands an event to the webhooks queue the way the call workflow does. */
async function fanOut(eventId: string) {
  const client = await api.deps.temporal();
  await client.workflow.execute('eventFanOutWorkflow', {
    workflowId: `event-fanout-${eventId}`,
    taskQueue: taskQueues({ taskQueuePrefix: settings.taskQueuePrefix! }).webhooks,
    args: [{ eventId }],
  });
}

describe('endpoints', () => {
  test('create answers the secret once; reads and lists never show it; a replay answers secret null', async () => {
    const key = `k-${randomBytes(4).toString('hex')}`;
    const body = { url: `${receiver.url}/created`, events: ['call.completed', 'call.failed'] };
    const created = await owner.post('/webhooks', body, { 'Idempotency-Key': key });
    assert.equal(created.status, 201);
    assert.match(created.body.secret, /^whsec_[0-9a-f]{64}$/);
    assert.deepEqual(
      { ...created.body, id: undefined, secret: undefined, created_at: undefined, updated_at: undefined },
      {
        object: 'webhook_endpoint',
        id: undefined,
        url: body.url,
        events: body.events,
        status: 'active',
        description: null,
        secret: undefined,
        created_at: undefined,
        updated_at: undefined,
      },
    );
    const replay = await owner.post('/webhooks', body, { 'Idempotency-Key': key });
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.body.secret, null);
    assert.equal(replay.body.id, created.body.id);

    const one = await owner.get(`/webhooks/${created.body.id}`);
    assert.equal(one.status, 200);
    assert.ok(!('secret' in one.body));
    assert.ok(!one.text.includes(created.body.secret));
    const list = await owner.get('/webhooks?limit=100');
    assert.equal(list.body.object, 'list');
    assert.ok(list.body.data.some((e: { id: string }) => e.id === created.body.id));
    assert.ok(!list.text.includes('whsec_'));
  });

  test('validation: events needs at least one known type, no duplicates', async () => {
    assertApiError(
      await owner.post('/webhooks', { url: `${receiver.url}/x`, events: [] }),
      400,
      'parameter_invalid',
      'events',
    );
    assertApiError(
      await owner.post('/webhooks', { url: `${receiver.url}/x`, events: ['call.started', 'call.started'] }),
      400,
      'parameter_invalid',
      'events',
    );
    const unknown = await owner.post('/webhooks', { url: `${receiver.url}/x`, events: ['webhook.test'] });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.code, 'parameter_invalid');
    assertApiError(
      await owner.post('/webhooks', { events: ['call.started'] }),
      400,
      'parameter_missing',
      'url',
    );
  });

  test('description: 500 characters pass, 501 are parameter_invalid, on create and change', async () => {
    const url = `${receiver.url}/described`;
    const at500 = await owner.post('/webhooks', {
      url,
      events: ['call.started'],
      description: 'å'.repeat(500),
    });
    assert.equal(at500.status, 201, at500.text);
    assert.equal(at500.body.description, 'å'.repeat(500));
    assertApiError(
      await owner.post('/webhooks', { url, events: ['call.started'], description: 'å'.repeat(501) }),
      400,
      'parameter_invalid',
      'description',
    );
    assertApiError(
      await owner.patch(`/webhooks/${at500.body.id}`, { description: 'å'.repeat(501) }),
      400,
      'parameter_invalid',
      'description',
    );
    const unchanged = await owner.get(`/webhooks/${at500.body.id}`);
    assert.equal(unchanged.body.description, 'å'.repeat(500));
    // Removed so that no event of later tests is delivered to it.
    await owner.delete(`/webhooks/${at500.body.id}`);
  });

  test('PATCH changes only the fields sent; active re-enables a disabled endpoint', async () => {
    const endpoint = await createEndpoint(owner, '/patched');
    const paused = await owner.patch(`/webhooks/${endpoint.id}`, { status: 'paused', description: null });
    assert.equal(paused.status, 200);
    assert.equal(paused.body.status, 'paused');
    assert.equal(paused.body.description, null);
    assert.deepEqual(paused.body.events, ['call.started']);
    assertApiError(
      await owner.patch(`/webhooks/${endpoint.id}`, { status: 'disabled' }),
      400,
      'parameter_invalid',
      'status',
    );

    await db.orm.em
      .fork()
      .nativeUpdate(
        WebhookEndpoint,
        { id: endpoint.id },
        { status: 'disabled', disabledAt: new Date(), failingSince: new Date(Date.now() - 6 * 86_400_000) },
      );
    assert.equal((await owner.get(`/webhooks/${endpoint.id}`)).body.status, 'disabled');
    const enabled = await owner.patch(`/webhooks/${endpoint.id}`, {
      status: 'active',
      events: ['call.failed'],
    });
    assert.equal(enabled.body.status, 'active');
    assert.deepEqual(enabled.body.events, ['call.failed']);
    const row = await db.orm.em.fork().findOneOrFail(WebhookEndpoint, { id: endpoint.id });
    assert.equal(row.failingSince, null);
    assert.equal(row.disabledAt, null);
  });

  test('an id from another workspace is 404', async () => {
    const endpoint = await createEndpoint(owner, '/mine');
    const stranger = api.client((await createFixture(db.orm, { role: 'owner' })).secret);
    assertApiError(await stranger.get(`/webhooks/${endpoint.id}`), 404, 'resource_missing', 'webhook_id');
    assertApiError(await stranger.delete(`/webhooks/${endpoint.id}`), 404, 'resource_missing', 'webhook_id');
  });
});

describe('roles and scopes', () => {
  test('members and viewers may read but not add, change, test, remove or rotate', async () => {
    const endpoint = await createEndpoint(owner, '/roles');
    for (const role of ['member', 'viewer'] as const) {
      const client = api.client((await createFixture(db.orm, { workspaceId: ownerWorkspace, role })).secret);
      assert.equal((await client.get(`/webhooks/${endpoint.id}`)).status, 200, role);
      assert.equal((await client.get(`/webhooks/${endpoint.id}/deliveries`)).status, 200, role);
      assertApiError(
        await client.post('/webhooks', { url: `${receiver.url}/r`, events: ['call.started'] }),
        403,
        'role_required',
      );
      assertApiError(
        await client.patch(`/webhooks/${endpoint.id}`, { status: 'paused' }),
        403,
        'role_required',
      );
      assertApiError(await client.post(`/webhooks/${endpoint.id}/test`), 403, 'role_required');
      assertApiError(await client.post(`/webhooks/${endpoint.id}/rotate-secret`), 403, 'role_required');
      assertApiError(await client.delete(`/webhooks/${endpoint.id}`), 403, 'role_required');
    }
    const admin = api.client(
      (await createFixture(db.orm, { workspaceId: ownerWorkspace, role: 'admin' })).secret,
    );
    assert.equal((await admin.patch(`/webhooks/${endpoint.id}`, { description: 'by admin' })).status, 200);
    assert.equal((await owner.get(`/webhooks/${endpoint.id}`)).body.status, 'active');
  });

  test('scopes: webhooks:read reads only; other scopes get missing_scope', async () => {
    const reader = api.client(
      (await createFixture(db.orm, { workspaceId: ownerWorkspace, scopes: ['webhooks:read'] })).secret,
    );
    assert.equal((await reader.get('/webhooks')).status, 200);
    assertApiError(
      await reader.post('/webhooks', { url: `${receiver.url}/s`, events: ['call.started'] }),
      403,
      'missing_scope',
    );
    const other = api.client(
      (await createFixture(db.orm, { workspaceId: ownerWorkspace, scopes: ['calls:write'] })).secret,
    );
    assertApiError(await other.get('/webhooks'), 403, 'missing_scope');
  });
});

describe('delivery', () => {
  test('webhook.test reaches an endpoint not subscribed to it, signed, with the spec headers, byte for byte', async () => {
    const endpoint = await createEndpoint(owner, '/test-event', ['call.completed']);
    const res = await owner.post(`/webhooks/${endpoint.id}/test`, { message: 'hello ø' });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.object, 'webhook_delivery');
    assert.equal(res.body.event_type, 'webhook.test');
    assert.equal(res.body.status, 'pending');

    const [got] = await waitFor('the test event', async () =>
      requestsTo('/test-event').length ? requestsTo('/test-event') : undefined,
    );
    const event = await db.orm.em
      .fork()
      .findOneOrFail(Event, { type: 'webhook.test', body: { $like: '%hello ø%' } });
    assert.ok(got!.rawBody.equals(Buffer.from(event.body, 'utf8')), 'the stored bytes exactly');
    const body = JSON.parse(got!.rawBody.toString('utf8'));
    assert.equal(body.id, event.id);
    assert.match(body.id, /^evt_[0-9a-f]+$/);
    assert.deepEqual(
      { object: body.object, type: body.type, api_version: body.api_version, data: body.data },
      { object: 'event', type: 'webhook.test', api_version: 'v1', data: { message: 'hello ø' } },
    );
    const h = got!.headers;
    assert.equal(got!.method, 'POST');
    assert.equal(h['content-type'], 'application/json');
    assert.equal(h['user-agent'], 'Service-Webhooks/1.0');
    assert.equal(h['service-event-id'], body.id);
    assert.equal(h['service-event-type'], 'webhook.test');
    const signature = h['service-signature'] as string;
    const t = Number(/^t=(\d+),v1=[0-9a-f]{64}$/.exec(signature)![1]);
    assert.ok(Math.abs(t - Date.now() / 1000) < 60);
    const expected = createHmac('sha256', endpoint.secret).update(`${t}.`).update(got!.rawBody).digest('hex');
    assert.equal(signature, `t=${t},v1=${expected}`);
    assert.equal(
      h['x-service-signature'],
      `sha256=${createHmac('sha256', endpoint.secret).update(got!.rawBody).digest('hex')}`,
    );
    assert.deepEqual(
      verifyWebhookSignature({ rawBody: got!.rawBody, signatureHeader: signature, secret: endpoint.secret }),
      { ok: true, timestamp: t },
    );
    // The receiver guide's checks refuse what they must.
    assert.equal(
      verifyWebhookSignature({
        rawBody: Buffer.concat([got!.rawBody, Buffer.from(' ')]),
        signatureHeader: signature,
        secret: endpoint.secret,
      }).ok,
      false,
    );
    assert.equal(
      verifyWebhookSignature({
        rawBody: got!.rawBody,
        signatureHeader: signature,
        secret: endpoint.secret,
        nowSeconds: t + 301,
      }).ok,
      false,
    );
    assert.equal(
      verifyWebhookSignature({
        rawBody: got!.rawBody,
        signatureHeader: signature,
        secret: endpoint.secret,
        nowSeconds: t + 300,
      }).ok,
      true,
    );

    const log = await waitFor('the delivered log entry', async () => {
      const page = await owner.get(`/webhooks/${endpoint.id}/deliveries?status=delivered`);
      return page.body.data.length ? page.body : undefined;
    });
    assert.equal(log.data[0].id, res.body.id);
    assert.equal(log.data[0].attempts, 1);
    assert.equal(log.data[0].response_status, 200);
    assert.equal(log.data[0].error, null);
    assert.ok(log.data[0].delivered_at);
  });

  test('a test event that cannot be queued answers 503 and leaves nothing behind', async () => {
    const endpoint = await createEndpoint(owner, '/unqueued', ['call.started']);
    const testEvents = () =>
      db.orm.em.fork().count(Event, { type: 'webhook.test', workspace: ownerWorkspace });
    const eventsBefore = await testEvents();
    const noTemporal = await startApi({
      orm: db.orm,
      settings,
      temporal: async () => {
        throw new Error('Temporal is down');
      },
    });
    try {
      const res = await noTemporal
        .client((await createFixture(db.orm, { workspaceId: ownerWorkspace })).secret)
        .post(`/webhooks/${endpoint.id}/test`);
      assertApiError(res, 503, 'upstream_unavailable');
    } finally {
      await noTemporal.close();
    }
    assert.equal(await testEvents(), eventsBefore, 'the event row is removed again');
    assert.equal(await db.orm.em.fork().count(WebhookDelivery, { endpoint: endpoint.id }), 0);
  });

  test('only subscribed types arrive', async () => {
    const endpoint = await createEndpoint(owner, '/subscribed', ['call.completed']);
    const em = db.orm.em.fork();
    const started = await insertEvent(em, { workspaceId: ownerWorkspace, type: 'call.started' });
    const completed = await insertEvent(em, { workspaceId: ownerWorkspace, type: 'call.completed' });
    await Promise.all([fanOut(started.id), fanOut(completed.id)]);
    const [got] = await waitFor('the subscribed event', async () =>
      requestsTo('/subscribed').length ? requestsTo('/subscribed') : undefined,
    );
    assert.equal(got!.headers['service-event-id'], completed.id);
    const deliveries = await db.orm.em.fork().find(WebhookDelivery, { endpoint: endpoint.id });
    assert.deepEqual(
      deliveries.map((d) => d.event),
      [completed.id],
    );
    const page = await owner.get(`/webhooks/${endpoint.id}/deliveries?event_type=call.started`);
    assert.deepEqual(page.body.data, []);
  });

  test('after a rotation the next event is signed with the new secret only', async () => {
    const endpoint = await createEndpoint(owner, '/rotated', ['call.started']);
    const rotated = await owner.post(`/webhooks/${endpoint.id}/rotate-secret`);
    assert.equal(rotated.status, 200);
    assert.match(rotated.body.secret, /^whsec_[0-9a-f]{64}$/);
    assert.notEqual(rotated.body.secret, endpoint.secret);
    assert.equal((await owner.post(`/webhooks/${endpoint.id}/test`)).status, 202);
    const [got] = await waitFor('the event after rotation', async () =>
      requestsTo('/rotated').length ? requestsTo('/rotated') : undefined,
    );
    const header = got!.headers['service-signature'] as string;
    assert.equal(
      verifyWebhookSignature({ rawBody: got!.rawBody, signatureHeader: header, secret: rotated.body.secret })
        .ok,
      true,
    );
    assert.equal(
      verifyWebhookSignature({ rawBody: got!.rawBody, signatureHeader: header, secret: endpoint.secret }).ok,
      false,
    );
  });

  test('paused and disabled endpoints still get test events; delete removes the endpoint, its secret and log', async () => {
    const endpoint = await createEndpoint(owner, '/deleted', ['call.failed']);
    await owner.patch(`/webhooks/${endpoint.id}`, { status: 'paused' });
    const whilePaused = await owner.post(`/webhooks/${endpoint.id}/test`, { message: 'while paused' });
    assert.equal(whilePaused.status, 202, whilePaused.text);
    assert.equal(whilePaused.body.trigger, 'test');
    await waitFor('the test event while paused', async () =>
      requestsTo('/deleted').length === 1 ? true : undefined,
    );
    await db.orm.em
      .fork()
      .nativeUpdate(WebhookEndpoint, { id: endpoint.id }, { status: 'disabled', disabledAt: new Date() });
    assert.equal(
      (await owner.post(`/webhooks/${endpoint.id}/test`, { message: 'while disabled' })).status,
      202,
    );
    const [, second] = await waitFor('the test event while disabled', async () =>
      requestsTo('/deleted').length === 2 ? requestsTo('/deleted') : undefined,
    );
    assert.equal(JSON.parse(second!.rawBody.toString('utf8')).data.message, 'while disabled');
    const log = await waitFor('both logged delivered', async () => {
      const page = await owner.get(`/webhooks/${endpoint.id}/deliveries?status=delivered&trigger=test`);
      return page.body.data.length === 2 ? page.body.data : undefined;
    });
    assert.deepEqual(
      log.map((d: { trigger: string; resent_from: null }) => [d.trigger, d.resent_from]),
      [
        ['test', null],
        ['test', null],
      ],
    );
    const row = await db.orm.em.fork().findOneOrFail(WebhookEndpoint, { id: endpoint.id });
    assert.equal(row.status, 'disabled', 'a test event changes no status');

    const deleted = await owner.delete(`/webhooks/${endpoint.id}`);
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, { object: 'webhook_endpoint', id: endpoint.id, deleted: true });
    assertApiError(await owner.get(`/webhooks/${endpoint.id}`), 404, 'resource_missing', 'webhook_id');
    assertApiError(await owner.delete(`/webhooks/${endpoint.id}`), 404, 'resource_missing', 'webhook_id');
    assert.equal(await db.orm.em.fork().count(WebhookEndpoint, { secret: endpoint.secret }), 0);
    const event = await insertEvent(db.orm.em.fork(), { workspaceId: ownerWorkspace, type: 'call.failed' });
    await fanOut(event.id);
    assert.equal(
      await db.orm.em.fork().count(WebhookDelivery, { event: event.id, endpoint: endpoint.id }),
      0,
    );
    assert.equal(requestsTo('/deleted').length, 2, 'only the two test events, nothing after the delete');
  });

  test('a slow receiver does not hold up another endpoint', async () => {
    const slowMs = 6_000;
    receiver.answer = (_n, path) => (path === '/slow' ? { status: 200, delayMs: slowMs } : { status: 200 });
    try {
      await createEndpoint(owner, '/slow', ['call.transferred']);
      await createEndpoint(owner, '/fast', ['call.transferred']);
      const event = await insertEvent(db.orm.em.fork(), {
        workspaceId: ownerWorkspace,
        type: 'call.transferred',
      });
      await fanOut(event.id);
      const [fast] = await waitFor('the fast endpoint', async () =>
        requestsTo('/fast').length ? requestsTo('/fast') : undefined,
      );
      const [slow] = await waitFor('the slow endpoint', async () =>
        requestsTo('/slow').length ? requestsTo('/slow') : undefined,
      );
      // The fast endpoint got its event while the slow one was still keeping its request open.
      assert.ok(fast!.receivedAt < slow!.receivedAt + slowMs, 'fast delivery waited for the slow receiver');
      // The fast delivery is logged as delivered (its row is written just after the answer) while
      // the slow one is still under way.
      const countOf = (status: 'delivered' | 'pending') =>
        db.orm.em.fork().count(WebhookDelivery, { event: event.id, status });
      await waitFor('the fast delivery logged', async () =>
        (await countOf('delivered')) === 1 ? true : undefined,
      );
      assert.equal(await countOf('pending'), 1, 'the slow delivery is still under way');
    } finally {
      receiver.answer = () => ({ status: 200 });
    }
  });
});

describe('URL rules with the private-target guard on', () => {
  const refused = [
    'http://example.com/hook',
    'ftp://example.com/hook',
    'https://user:pw@example.com/hook',
    'https://localhost/hook',
    'https://app.localhost/hook',
    'https://intranet/hook',
    'https://127.0.0.1/hook',
    'https://2130706433/hook',
    'https://10.1.2.3/hook',
    'https://172.16.0.1/hook',
    'https://192.168.1.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/hook',
    'https://224.0.0.1/hook',
    'https://0.0.0.0/hook',
    'https://[::1]/hook',
    'https://[::]/hook',
    'https://[fd12:3456::1]/hook',
    'https://[fe80::1]/hook',
    'https://[ff02::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:8.8.8.8]/hook',
    'https://[::ffff:0:7f00:1]/x',
    'not a url',
  ];
  for (const url of refused) {
    test(`refuses ${url}`, async () => {
      const client = guardedApi.client(
        (await createFixture(db.orm, { workspaceId: ownerWorkspace, role: 'owner' })).secret,
      );
      assertApiError(
        await client.post('/webhooks', { url, events: ['call.started'] }),
        400,
        'parameter_invalid',
        'url',
      );
    });
  }

  test('a refusal says only that the url is not allowed, never what a name resolved to', async () => {
    const client = guardedApi.client((await createFixture(db.orm, { workspaceId: ownerWorkspace })).secret);
    for (const url of ['https://localhost/hook', 'https://intranet/hook', 'https://10.1.2.3/hook']) {
      const res = await client.post('/webhooks', { url, events: ['call.started'] });
      assertApiError(res, 400, 'parameter_invalid', 'url');
      assert.equal(res.body.error.message, URL_NOT_ALLOWED, url);
    }
  });

  test('accepts a public https address, and PATCH checks the url again', async () => {
    const client = guardedApi.client((await createFixture(db.orm, { workspaceId: ownerWorkspace })).secret);
    const created = await client.post('/webhooks', {
      url: 'https://93.184.215.14/hook',
      events: ['call.started'],
    });
    assert.equal(created.status, 201, created.text);
    assertApiError(
      await client.patch(`/webhooks/${created.body.id}`, { url: 'https://10.0.0.1/' }),
      400,
      'parameter_invalid',
      'url',
    );
  });

  test('delivery checks the address actually connected to and never follows a redirect', async () => {
    const body = Buffer.from('{}');
    const port = new URL(receiver.url).port;
    const literal = await sendWebhook({
      url: `https://127.0.0.1:${port}/x`,
      body,
      headers: {},
      allowPrivate: false,
    });
    assert.equal(literal.delivered, false);
    assert.equal(literal.error, TARGET_REFUSED);
    // A name whose DNS answer is private (rebinding): refused by the resolver check, nothing sent.
    const before = receiver.requests.length;
    const named = await sendWebhook({
      url: `https://localhost:${port}/x`,
      body,
      headers: {},
      allowPrivate: false,
    });
    assert.equal(named.delivered, false);
    // The tenant's delivery log does not say what the name resolved to.
    assert.equal(named.error, TARGET_REFUSED);
    assert.equal(receiver.requests.length, before);

    receiver.answer = (_n, path) =>
      path === '/redirect'
        ? { status: 302, headers: { Location: `${receiver.url}/target` } }
        : { status: 200 };
    try {
      const redirected = await sendWebhook({
        url: `${receiver.url}/redirect`,
        body,
        headers: {},
        allowPrivate: true,
      });
      assert.equal(redirected.delivered, false);
      assert.equal(redirected.responseStatus, 302);
      assert.match(redirected.error!, /not followed/);
      assert.equal(requestsTo('/target').length, 0);
    } finally {
      receiver.answer = () => ({ status: 200 });
    }
  });
});
