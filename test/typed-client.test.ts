import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { openApiDocument } from '../api/http/openapi.js';
import { allRoutes } from '../api/routes/index.js';
import {
  type Agent,
  type AgentToolInput,
  type ApiError,
  createClient,
  type ToolCall as ToolCallObject,
  type VoiceAgentClient,
  verifyToolRequestSignature,
  verifyWebhookSignature,
} from '../clients/typescript/src/index.js';
import { ToolCall } from '../db/entities/index.js';
import { toolRequestHeaders, toolRequestSignature } from '../lib/agent-tools/tool-request-signature.js';
import { generateToolsSecret } from '../lib/agent-tools/tools-secret.js';
import { serviceSignature } from '../lib/webhooks/sign.js';
import { verifyWebhookSignature as serverSideCheck } from '../lib/webhooks/verify-signature.js';
import { checkedInClientSchema, generateClientSchema } from '../scripts/generate-client.js';
import { createWebhooksWorker } from '../workers/webhooks-worker.js';
import { createFixture, type Fixture, startApi, type TestApi } from './support/api.js';
import { createAgentFixture, createQueuedCall } from './support/call-fixtures.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { installQuietRuntime } from './support/quiet-logger.js';
import { type SharedDevServer, sharedDevServer } from './support/temporal.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { bundleWorkflows } from './support/workflow-bundles.js';

// The typed client of clients/typescript: its generated types are those of the document served
// now, it works against the real API (real HTTP, PostgreSQL, Temporal), and its webhook check
// accepts a real delivery of the webhooks worker and refuses anything else.

installQuietRuntime();

describe('the generated types', () => {
  test('the checked-in schema.d.ts is what `npm run client:generate` writes for the routes served now', async () => {
    const fresh = await generateClientSchema();
    assert.ok(
      fresh === checkedInClientSchema(),
      'clients/typescript/src/schema.d.ts is out of date: run `npm run client:generate` and commit it',
    );
    // The comparison can fail: one route less is another file.
    const fewer = await generateClientSchema(allRoutes.filter((route) => route.operationId !== 'getUsage'));
    assert.notEqual(fewer, fresh);
    assert.match(fresh, /"\/agents\/\{agent_id\}": \{/);
    assert.doesNotMatch(fewer, /getUsage/);
  });
});

describe('the client against the API', () => {
  let db: TestDatabase;
  let temporal: SharedDevServer;
  let connection: NativeConnection;
  let worker: Worker;
  let workerRun: Promise<void>;
  let receiver: WebhookReceiver;
  let api: TestApi;
  let owner: Fixture;
  let client: VoiceAgentClient;

  before(async () => {
    const taskQueuePrefix = `typed-client-${randomBytes(4).toString('hex')}-`;
    [db, temporal, receiver] = await Promise.all([
      freshDatabase(),
      sharedDevServer(),
      startWebhookReceiver(),
    ]);
    connection = await NativeConnection.connect({ address: temporal.address });
    worker = await createWebhooksWorker({
      connection,
      settings: { temporalNamespace: temporal.namespace, taskQueuePrefix, webhooksAllowPrivateTargets: true },
      orm: db.orm,
      workflowBundle: await bundleWorkflows(),
    });
    workerRun = worker.run();
    api = await startApi({
      orm: db.orm,
      settings: { taskQueuePrefix, webhooksAllowPrivateTargets: true, temporalNamespace: temporal.namespace },
    });
    owner = await createFixture(db.orm, { requestsPerSecond: 10_000 });
    client = createClient({ baseUrl: api.url, apiKey: owner.secret });
  });

  after(async () => {
    worker?.shutdown();
    await workerRun;
    await connection?.close();
    await api?.close();
    await temporal?.close();
    await receiver?.close();
    await db?.close();
  });

  test('the types are generated from the very document the API serves', async () => {
    const served = await (await fetch(`${api.url}/v1/openapi.json`)).json();
    assert.deepEqual(served, JSON.parse(JSON.stringify(openApiDocument(allRoutes))));
  });

  test('create an agent (with an Idempotency-Key), list it, get it', async () => {
    const key = crypto.randomUUID();
    const body = { name: 'Support', system_prompt: 'You help customers.', language: 'nb-NO' };
    const created = await client.POST('/agents', { body, params: { header: { 'Idempotency-Key': key } } });
    assert.equal(created.response.status, 201);
    assert.ok(created.data, JSON.stringify(created.error));
    const agent: Agent = created.data;
    assert.equal(agent.object, 'agent');
    assert.equal(agent.status, 'draft');
    assert.equal(agent.language, 'nb-NO');

    const replayed = await client.POST('/agents', { body, params: { header: { 'Idempotency-Key': key } } });
    assert.equal(replayed.data?.id, agent.id);
    assert.equal(replayed.response.headers.get('idempotent-replayed'), 'true');

    const list = await client.GET('/agents', { params: { query: { limit: 10 } } });
    assert.equal(list.response.status, 200);
    assert.deepEqual(
      list.data?.data.map((a) => a.id),
      [agent.id],
    );
    assert.equal(list.data?.has_more, false);

    const got = await client.GET('/agents/{agent_id}', { params: { path: { agent_id: agent.id } } });
    assert.deepEqual(got.data, agent);

    const published = await client.POST('/agents/{agent_id}/publish', {
      params: { path: { agent_id: agent.id } },
    });
    assert.equal(published.data?.status, 'published');

    // A base URL that already names /v1 (with a trailing slash) reaches the same API.
    const again = createClient({ baseUrl: `${api.url}/v1/`, apiKey: owner.secret });
    assert.equal((await again.GET('/me')).data?.workspace_id, owner.workspaceId);
  });

  test('a refusal comes back as the spec’s error body, with the request_id of the X-Request-Id header', async () => {
    const missing = await client.GET('/agents/{agent_id}', {
      params: { path: { agent_id: crypto.randomUUID() } },
    });
    assert.equal(missing.response.status, 404);
    assert.equal(missing.data, undefined);
    const error: ApiError | undefined = missing.error;
    assert.equal(error?.error.code, 'resource_missing');
    assert.equal(error?.error.type, 'not_found_error');
    assert.match(error?.request_id ?? '', /^req_/);
    assert.equal(error?.request_id, missing.response.headers.get('x-request-id'));

    const invalid = await client.PATCH('/agents/{agent_id}', {
      params: { path: { agent_id: crypto.randomUUID() } },
      body: { language: 'english' },
    });
    assert.equal(invalid.response.status, 400);
    assert.equal(invalid.error?.error.code, 'parameter_invalid');
    assert.equal(invalid.error?.error.param, 'language');

    const unauthenticated = createClient({ baseUrl: api.url, apiKey: 'svc_live_wrong' });
    const refused = await unauthenticated.GET('/agents');
    assert.equal(refused.response.status, 401);
    assert.equal(refused.error?.error.code, 'api_key_invalid');
  });

  test('verifyWebhookSignature accepts a real delivery, and refuses it changed, late or under another secret', async () => {
    const created = await client.POST('/webhooks', {
      body: { url: `${receiver.url}/typed-client`, events: ['call.completed'] },
    });
    assert.ok(created.data, JSON.stringify(created.error));
    const { id, secret } = created.data;
    assert.ok(secret);
    const sent = await client.POST('/webhooks/{webhook_id}/test', {
      params: { path: { webhook_id: id } },
      body: { message: 'from the typed client' },
    });
    assert.equal(sent.response.status, 202);
    assert.equal(sent.data?.event_type, 'webhook.test');

    const [delivery] = await receiver.waitForRequests(1, 30_000);
    const header = String(delivery!.headers['service-signature']);
    const rawBody = delivery!.rawBody;
    assert.equal(JSON.parse(rawBody.toString('utf8')).data.message, 'from the typed client');

    const accepted = await verifyWebhookSignature({ rawBody, signatureHeader: header, secret });
    assert.equal(accepted.ok, true, JSON.stringify(accepted));
    // Bytes as a string and as an ArrayBuffer are the same message.
    assert.equal(
      (await verifyWebhookSignature({ rawBody: rawBody.toString('utf8'), signatureHeader: header, secret }))
        .ok,
      true,
    );
    const copy = new Uint8Array(rawBody).buffer;
    assert.equal((await verifyWebhookSignature({ rawBody: copy, signatureHeader: header, secret })).ok, true);

    const changed = Buffer.from(
      rawBody.toString('utf8').replace('from the typed client', 'from someone else'),
    );
    const refusals = {
      changed: await verifyWebhookSignature({ rawBody: changed, signatureHeader: header, secret }),
      reserialised: await verifyWebhookSignature({
        rawBody: JSON.stringify(JSON.parse(rawBody.toString('utf8')), null, 1),
        signatureHeader: header,
        secret,
      }),
      otherSecret: await verifyWebhookSignature({
        rawBody,
        signatureHeader: header,
        secret: `whsec_${'0'.repeat(64)}`,
      }),
      withoutPrefix: await verifyWebhookSignature({
        rawBody,
        signatureHeader: header,
        secret: secret.slice('whsec_'.length),
      }),
      late: await verifyWebhookSignature({
        rawBody,
        signatureHeader: header,
        secret,
        nowSeconds: Math.floor(Date.now() / 1000) + 301,
      }),
      noHeader: await verifyWebhookSignature({ rawBody, signatureHeader: undefined, secret }),
      noTimestamp: await verifyWebhookSignature({
        rawBody,
        signatureHeader: header.replace(/t=\d+,/, ''),
        secret,
      }),
    };
    for (const [name, check] of Object.entries(refusals)) assert.equal(check.ok, false, name);
    assert.deepEqual(refusals.late, { ok: false, reason: 'timestamp outside tolerance' });
  });

  test('it agrees with the server’s signing function and its own receiver check', async () => {
    const secret = `whsec_${randomBytes(32).toString('hex')}`;
    const body = Buffer.from(JSON.stringify({ id: 'evt_1', type: 'call.completed', text: 'blåbær 😀' }));
    const now = Math.floor(Date.now() / 1000);
    const header = serviceSignature(secret, body, now - 10);
    const client = await verifyWebhookSignature({ rawBody: body, signatureHeader: header, secret });
    const server = serverSideCheck({ rawBody: body, signatureHeader: header, secret });
    assert.deepEqual(client, { ok: true, timestamp: now - 10 });
    assert.deepEqual(client, server);
    // Several v1 values (a rotation): one match is enough; none is a mismatch.
    const other = serviceSignature(`whsec_${randomBytes(32).toString('hex')}`, body, now).split('v1=')[1];
    const both = `${header},v1=${other}`;
    assert.equal((await verifyWebhookSignature({ rawBody: body, signatureHeader: both, secret })).ok, true);
    const wrongOnly = `t=${now - 10},v1=${other}`;
    assert.deepEqual(await verifyWebhookSignature({ rawBody: body, signatureHeader: wrongOnly, secret }), {
      ok: false,
      reason: 'signature mismatch',
    });
  });

  test('agent tools: create with tools, make the tools secret, read a call’s tool calls, all typed', async () => {
    const tool: AgentToolInput = {
      name: 'check_availability',
      description: 'Free slots for a day.',
      parameters: { type: 'object', properties: { date: { type: 'string' } }, required: ['date'] },
      url: 'https://93.184.215.14/tools/availability',
    };
    const created = await client.POST('/agents', { body: { name: 'Booker', tools: [tool] } });
    assert.ok(created.data, JSON.stringify(created.error));
    assert.equal(created.data.tools[0]?.timeout_seconds, 10);
    assert.equal(created.data.tools[0]?.type, 'function');

    const refused = await client.PATCH('/agents/{agent_id}', {
      params: { path: { agent_id: created.data.id } },
      body: { tools: [tool, { ...tool, url: 'https://93.184.215.14/other' }] },
    });
    assert.equal(refused.error?.error.param, 'tools[1].name');

    const secret = await client.POST('/agents/{agent_id}/tools-secret', {
      params: { path: { agent_id: created.data.id } },
    });
    assert.equal(secret.response.status, 200);
    assert.match(secret.data?.secret ?? '', /^tsec_[0-9a-f]{64}$/);

    const fixture = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId });
    const call = await createQueuedCall(db.orm, fixture, { to: '+4798765432' });
    const em = db.orm.em.fork();
    em.create(ToolCall, {
      id: `tc_${randomBytes(16).toString('hex')}`,
      call: call.id,
      name: 'check_availability',
      arguments: { date: '2026-12-01' },
      status: 'succeeded',
      attempts: 2,
      responseStatus: 200,
      result: '{"slots":[]}',
      durationMs: 840,
      afterLineIndex: 0,
      createdAt: new Date(),
    });
    await em.flush();
    const listed = await client.GET('/calls/{call_id}/tool-calls', {
      params: { path: { call_id: call.id }, query: { limit: 10 } },
    });
    const first: ToolCallObject | undefined = listed.data?.data[0];
    assert.equal(first?.attempts, 2);
    assert.equal(first?.status, 'succeeded');
    assert.equal(first?.call_id, call.id);
  });

  test('verifyToolRequestSignature accepts a signed tool request as received over HTTP, and refuses it changed', async () => {
    const secret = generateToolsSecret();
    const toolCallId = `tc_${randomBytes(16).toString('hex')}`;
    const body = Buffer.from(
      JSON.stringify({
        object: 'tool_call',
        id: toolCallId,
        name: 'check_availability',
        arguments: { date: '2026-12-01', note: 'blåbær 😀' },
        attempt: 1,
      }),
    );
    const now = Math.floor(Date.now() / 1000);
    const headers = toolRequestHeaders({ secret, body, toolCallId, unixSeconds: now });
    assert.equal(headers['Voice-Signature'], toolRequestSignature(secret, body, now));
    assert.equal(headers['Idempotency-Key'], toolCallId);
    assert.equal(headers['Content-Type'], 'application/json');
    // No secret yet: no signature.
    assert.equal(
      'Voice-Signature' in toolRequestHeaders({ secret: null, body, toolCallId, unixSeconds: now }),
      false,
    );

    const before = receiver.requests.length;
    const sent = await fetch(`${receiver.url}/tools/check_availability`, { method: 'POST', headers, body });
    assert.equal(sent.status, 200);
    const [received] = (await receiver.waitForRequests(before + 1, 10_000)).slice(before);
    const header = String(received!.headers['voice-signature']);
    assert.equal(received!.headers['idempotency-key'], toolCallId);
    const rawBody = received!.rawBody;

    assert.deepEqual(await verifyToolRequestSignature({ rawBody, signatureHeader: header, secret }), {
      ok: true,
      timestamp: now,
    });
    // The same scheme as a webhook's: either check of the client accepts it, and the server's too.
    assert.equal((await verifyWebhookSignature({ rawBody, signatureHeader: header, secret })).ok, true);
    assert.equal(serverSideCheck({ rawBody, signatureHeader: header, secret }).ok, true);

    const refusals = {
      changed: await verifyToolRequestSignature({
        rawBody: Buffer.from(rawBody.toString('utf8').replace('2026-12-01', '2026-12-02')),
        signatureHeader: header,
        secret,
      }),
      otherSecret: await verifyToolRequestSignature({
        rawBody,
        signatureHeader: header,
        secret: generateToolsSecret(),
      }),
      withoutPrefix: await verifyToolRequestSignature({
        rawBody,
        signatureHeader: header,
        secret: secret.slice('tsec_'.length),
      }),
      late: await verifyToolRequestSignature({
        rawBody,
        signatureHeader: header,
        secret,
        nowSeconds: now + 301,
      }),
    };
    for (const [name, check] of Object.entries(refusals)) assert.equal(check.ok, false, name);
    assert.deepEqual(refusals.changed, { ok: false, reason: 'signature mismatch' });
    assert.deepEqual(await verifyToolRequestSignature({ rawBody, signatureHeader: undefined, secret }), {
      ok: false,
      reason: 'Voice-Signature header missing',
    });
    assert.deepEqual(
      await verifyToolRequestSignature({ rawBody, signatureHeader: `v1=${'0'.repeat(64)}`, secret }),
      { ok: false, reason: 'no t= in Voice-Signature' },
    );
  });
});
