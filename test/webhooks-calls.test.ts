import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  type Worker,
} from '@temporalio/worker';
import { loadSettings, type Settings } from '../lib/settings.js';
import { verifyWebhookSignature } from '../lib/webhooks/verify-signature.js';
import { createCallsWorker } from '../workers/calls-worker.js';
import { createCarrierSimulatorWorker } from '../workers/carrier-simulator-worker.js';
import { createWebhooksWorker } from '../workers/webhooks-worker.js';
import { callWorkflowsPath } from '../workers/workflow-code.js';
import { createFixture, type Fixture, startApi, type TestApi } from './support/api.js';
import { type AgentFixture, createAgentFixture } from './support/call-fixtures.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { type SharedDevServer, sharedDevServer } from './support/temporal.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

Runtime.install({ logger: new DefaultLogger('WARN') });

// The hand-off between the call workflow and webhooks, end to end: a call placed through the API
// reaches a subscribed receiver as signed call.started and call.completed events whose data.object
// is the Call as GET /calls/{id} shows it.

let db: TestDatabase;
let temporal: SharedDevServer;
let api: TestApi;
let client: Client;
let connection: NativeConnection;
let workers: Worker[];
let running: Promise<unknown>;
let owner: Fixture;
let agent: AgentFixture;
let receiver: WebhookReceiver;

before(async () => {
  [db, temporal, receiver] = await Promise.all([freshDatabase(), sharedDevServer(), startWebhookReceiver()]);
  const settings: Settings = {
    ...loadSettings({}),
    temporalAddress: temporal.address,
    temporalNamespace: temporal.namespace,
    taskQueuePrefix: `wh-calls-${randomBytes(4).toString('hex')}-`,
    simTimeScale: 0.01,
    webhooksAllowPrivateTargets: true,
  };
  connection = await NativeConnection.connect({ address: temporal.address });
  client = new Client({
    connection: await Connection.connect({ address: temporal.address }),
    namespace: temporal.namespace,
  });
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: callWorkflowsPath,
    logger: new DefaultLogger('WARN'),
  });
  const deps = { connection, client, settings, orm: db.orm, workflowBundle };
  workers = await Promise.all([
    createCallsWorker(deps),
    createCarrierSimulatorWorker(deps),
    createWebhooksWorker(deps),
  ]);
  running = Promise.all(workers.map((worker) => worker.run()));
  api = await startApi({ orm: db.orm, settings, temporal: async () => client });
  owner = await createFixture(db.orm);
  agent = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId, name: 'Ada' });
});

after(async () => {
  await api?.close();
  for (const worker of workers ?? []) worker.shutdown();
  await running;
  await client?.connection.close();
  await connection?.close();
  await temporal?.close();
  await receiver?.close();
  await db?.close();
});

test('a call placed through the API arrives as signed call.started and call.completed events', async () => {
  const http = api.client(owner.secret);
  const endpoint = await http.post('/webhooks', {
    url: `${receiver.url}/calls`,
    events: ['call.started', 'call.completed'],
  });
  assert.equal(endpoint.status, 201);
  const call = await http.post('/calls', {
    agent_id: agent.agentId,
    to: '+4790005678',
    metadata: { order: '42' },
  });
  assert.equal(call.status, 202, call.text);

  const deadline = Date.now() + 60_000;
  while (receiver.requests.filter((r) => r.path === '/calls').length < 2 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const got = receiver.requests.filter((r) => r.path === '/calls');
  const events = got.map((r) => {
    assert.ok(
      verifyWebhookSignature({
        rawBody: r.rawBody,
        signatureHeader: r.headers['service-signature'] as string,
        secret: endpoint.body.secret,
      }).ok,
    );
    const body = JSON.parse(r.rawBody.toString('utf8'));
    assert.equal(r.headers['service-event-id'], body.id);
    assert.equal(r.headers['service-event-type'], body.type);
    return body;
  });
  const byType = Object.fromEntries(events.map((e) => [e.type, e]));
  assert.deepEqual(Object.keys(byType).sort(), ['call.completed', 'call.started']);
  assert.equal(byType['call.started'].data.object.id, call.body.id);
  assert.equal(byType['call.started'].data.object.status, 'in_progress');
  assert.deepEqual(byType['call.started'].data.object.metadata, { order: '42' });
  const completed = byType['call.completed'].data.object;
  assert.equal(completed.status, 'completed');
  assert.ok(completed.analysis);
  const fetched = await http.get(`/calls/${call.body.id}`);
  assert.deepEqual(completed, fetched.body, 'data.object is the Call as GET /calls/{id} shows it');

  const log = await http.get(`/webhooks/${endpoint.body.id}/deliveries`);
  assert.deepEqual(
    log.body.data.map((d: { status: string }) => d.status),
    ['delivered', 'delivered'],
  );
});
