import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { apiReadiness } from '../api/health.js';
import { createLogger } from '../lib/logger.js';
import { serveOperatorPort } from '../lib/metrics/metrics-server.js';
import { loadSettings } from '../lib/settings.js';
import { freePort } from '../scripts/processes.js';
import { createFixture, type Fixture, startApi, type TestApi } from './support/api.js';
import { type AgentFixture, createAgentFixture } from './support/call-fixtures.js';
import { type CallStack, startCallStack, waitForCallEnd } from './support/call-stack.js';
import { type Scrape, scrape } from './support/prometheus-scrape.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// The metrics of docs/operations.md ("Metrics"), scraped over HTTP and parsed as Prometheus text:
// the API's requests by route template and status, idempotent replays and 429s, and, after a real
// call placed through the API with its webhook deliveries, the call, turn and delivery metrics.
// The API and the workers share this process (and its registry), as they share nothing in
// production; every assertion compares a scrape after with one before.

let stack: CallStack;
let api: TestApi;
let owner: Fixture;
let agent: AgentFixture;
let receiver: WebhookReceiver;

before(async () => {
  [stack, receiver] = await Promise.all([
    startCallStack({
      prefix: 'metrics',
      simTimeScale: 0.01,
      webhooks: true,
      settings: { webhooksAllowPrivateTargets: true },
    }),
    startWebhookReceiver(),
  ]);
  ({ api } = stack);
  owner = await createFixture(stack.db.orm, { requestsPerSecond: 10_000 });
  agent = await createAgentFixture(stack.db.orm, { workspaceId: owner.workspaceId, name: 'Ada' });
});

after(async () => {
  await stack?.close();
  await receiver?.close();
});

const metricsOf = (server: { url: string }) => scrape(`${server.url}/metrics`);
const delta = (before: Scrape, after: Scrape, name: string, labels?: Record<string, string>) =>
  after.value(name, labels) - before.value(name, labels);
const countDelta = (before: Scrape, after: Scrape, name: string, labels?: Record<string, string>) =>
  after.count(name, labels) - before.count(name, labels);

describe('the API', () => {
  test('/metrics counts requests by method, route template and status, and times them; no id is a label', async () => {
    const http = api.client(owner.secret);
    const before = await metricsOf(api);
    for (let i = 0; i < 3; i++) assert.equal((await http.get('/agents')).status, 200);
    const missing = randomUUID();
    assert.equal((await http.get(`/agents/${missing}`)).status, 404);
    assert.equal((await http.get('/no-such-thing')).status, 404);
    const after = await metricsOf(api);

    const list = { method: 'GET', route: '/v1/agents', status: '200' };
    assert.equal(delta(before, after, 'http_requests_total', list), 3);
    assert.equal(
      delta(before, after, 'http_requests_total', { route: '/v1/agents/:agent_id', status: '404' }),
      1,
    );
    assert.equal(delta(before, after, 'http_requests_total', { route: 'unmatched', status: '404' }), 1);
    assert.equal(countDelta(before, after, 'http_request_duration_seconds', { route: '/v1/agents' }), 3);
    // The first scrape itself is counted by the second.
    assert.equal(delta(before, after, 'http_requests_total', { route: '/metrics', status: '200' }), 1);
    assert.ok(
      !after.samples.some((sample) => Object.values(sample.labels).some((value) => value.includes(missing))),
      'an id never becomes a label value',
    );
    // The process's own and the database's: the runtime, both pools, the calls live now.
    assert.ok(after.value('process_cpu_seconds_total') > 0);
    assert.ok(after.types.get('nodejs_eventloop_lag_seconds') === 'gauge');
    assert.ok(after.value('db_pool_connections', { pool: 'orm' }) >= 1);
    assert.ok(after.value('db_pool_connections', { pool: 'reads' }) >= 1);
    assert.equal(after.value('db_pool_waiting_clients', { pool: 'orm' }), 0);
    assert.ok(after.types.get('calls_live') === 'gauge');
  });

  test('idempotent replays and 429 refusals are counted', async () => {
    const http = api.client(owner.secret);
    const before = await metricsOf(api);
    const key = `metrics-${randomUUID()}`;
    await http.post('/agents', { name: 'metrics-replay' }, { 'idempotency-key': key });
    const replayed = await http.post('/agents', { name: 'metrics-replay' }, { 'idempotency-key': key });
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    const slow = await createFixture(stack.db.orm, { requestsPerSecond: 1 });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => api.client(slow.secret).get('/agents')),
    );
    const refused = answers.filter((answer) => answer.status === 429).length;
    assert.ok(refused >= 1, 'a burst over one request per second is refused');
    const after = await metricsOf(api);
    assert.equal(delta(before, after, 'idempotency_replays_total'), 1);
    assert.equal(delta(before, after, 'rate_limit_refusals_total', { limit: 'rate_limited' }), refused);
    assert.equal(
      delta(before, after, 'http_requests_total', { route: '/v1/agents', status: '429' }),
      refused,
    );
  });

  test('METRICS_PORT moves /metrics off the public port to one with /healthz and /readyz', async () => {
    const logger = createLogger('error');
    const privateApi = await startApi({
      orm: stack.db.orm,
      settings: { metricsPort: { first: 1, last: 1 } },
    });
    const operator = await serveOperatorPort(
      { host: '127.0.0.1', metricsPort: undefined },
      async () => ({ ready: true, body: { status: 'ready', checks: {} } }),
      logger,
    );
    assert.equal(operator, undefined, 'no METRICS_PORT, no operator port');
    const port = await serveOperatorPort(
      { host: '127.0.0.1', metricsPort: await freeRange() },
      apiReadiness({ settings: stack.settings, orm: stack.db.orm, temporal: async () => stack.client }),
      logger,
    );
    try {
      const onPublic = await fetch(`${privateApi.url}/metrics`);
      assert.notEqual(onPublic.status, 200, 'not on the API port');
      assert.doesNotMatch(await onPublic.text(), /# TYPE/);
      assert.ok(port);
      const scraped = await metricsOf(port);
      assert.ok(scraped.types.get('http_requests_total') === 'counter');
      assert.deepEqual(await (await fetch(`${port.url}/healthz`)).json(), { status: 'ok' });
      const ready = await fetch(`${port.url}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(((await ready.json()) as { checks: unknown }).checks, {
        database: 'ok',
        temporal: 'ok',
        workers: 'ok',
      });
      assert.equal((await fetch(`${port.url}/metrics`, { method: 'POST' })).status, 405);
    } finally {
      await port?.close();
      await privateApi.close();
    }
  });

  test('METRICS_PORT N-M: processes sharing a network namespace (API replicas) each take a free port of the range', async () => {
    const range = await freeRange();
    const ready = async () => ({ ready: true, body: { status: 'ready' as const, checks: {} } });
    const logger = createLogger('error');
    const [a, b] = [
      await serveOperatorPort({ host: '127.0.0.1', metricsPort: range }, ready, logger),
      await serveOperatorPort({ host: '127.0.0.1', metricsPort: range }, ready, logger),
    ];
    try {
      assert.ok(a && b);
      assert.notEqual(a.url, b.url);
      for (const server of [a, b]) {
        const port = Number(new URL(server.url).port);
        assert.ok(port >= range.first && port <= range.last, server.url);
        assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
      }
    } finally {
      await a?.close();
      await b?.close();
    }
    assert.deepEqual(loadSettings({ METRICS_PORT: '9470-9479' }).metricsPort, { first: 9470, last: 9479 });
    assert.deepEqual(loadSettings({ METRICS_PORT: '9464' }).metricsPort, { first: 9464, last: 9464 });
    assert.equal(loadSettings({}).metricsPort, undefined);
    for (const bad of ['0', '9479-9470', 'x', '70000']) {
      assert.throws(() => loadSettings({ METRICS_PORT: bad }), /METRICS_PORT must be a port or a range/);
    }
  });
});

/** A range of ports starting at a free one. */
async function freeRange(): Promise<{ first: number; last: number }> {
  const first = await freePort();
  return { first, last: Math.min(first + 5, 65535) };
}

describe('campaigns', () => {
  test('campaign progress: campaigns by status, and the recipients of those not over by status', async () => {
    const http = api.client(owner.secret);
    const before = await metricsOf(api);
    const created = await http.post('/campaigns', {
      name: 'Metrics',
      agent_id: agent.agentId,
      recipients: [{ to: '+4791100001' }, { to: '+4791100002' }, { to: '+4791100003' }],
      schedule: { start_at: new Date(Date.now() + 86_400_000).toISOString() },
    });
    assert.equal(created.status, 201, created.text);
    const after = await metricsOf(api);
    assert.equal(delta(before, after, 'campaigns', { status: 'scheduled' }), 1);
    assert.equal(delta(before, after, 'campaign_recipients', { status: 'pending' }), 3);
    const canceled = await http.post(`/campaigns/${created.body.id}/cancel`);
    assert.equal(canceled.status, 200, canceled.text);
    const over = await metricsOf(api);
    assert.equal(delta(after, over, 'campaigns', { status: 'canceled' }), 1);
    assert.equal(
      delta(after, over, 'campaign_recipients', { status: 'pending' }),
      -3,
      'an ended campaign leaves the progress gauge',
    );
  });
});

describe('the workers', () => {
  test('a call placed through the API and its webhook deliveries move the call, turn and delivery metrics', {
    timeout: 120_000,
  }, async () => {
    const http = api.client(owner.secret);
    const endpoint = await http.post('/webhooks', {
      url: `${receiver.url}/metrics`,
      events: ['call.started', 'call.completed'],
    });
    assert.equal(endpoint.status, 201);
    const before = await metricsOf(api);
    const placed = await http.post('/calls', { agent_id: agent.agentId, to: '+4790005678' });
    assert.equal(placed.status, 202, placed.text);
    const ended = await waitForCallEnd(http, placed.body.id, 60_000);
    assert.equal(ended.status, 'completed');
    const deadline = Date.now() + 60_000;
    while (receiver.requests.filter((r) => r.path === '/metrics').length < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The delivery's attempt is counted once its result is logged, a moment after the receiver answered.
    let after = await metricsOf(api);
    while (delta(before, after, 'webhook_deliveries_total') < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await metricsOf(api);
    }

    const phone = { direction: 'outbound', channel: 'phone' };
    assert.equal(delta(before, after, 'calls_started_total', phone), 1);
    assert.equal(
      delta(before, after, 'calls_ended_total', {
        ...phone,
        status: 'completed',
        end_reason: ended.end_reason,
      }),
      1,
    );
    assert.equal(countDelta(before, after, 'call_duration_seconds', phone), 1);
    const transcript = await http.get(`/calls/${placed.body.id}/transcript`);
    const callerLines = (transcript.body.data as { role: string }[]).filter((l) => l.role === 'caller');
    // Each of the person's lines is answered by one agent turn (or more, when a step is retried).
    assert.ok(countDelta(before, after, 'agent_turn_seconds') >= callerLines.length);
    assert.ok(countDelta(before, after, 'agent_turn_first_sentence_seconds') >= callerLines.length);
    assert.equal(delta(before, after, 'webhook_delivery_attempts_total', { result: 'delivered' }), 2);
    assert.equal(delta(before, after, 'webhook_deliveries_total', { outcome: 'delivered' }), 2);
    assert.equal(countDelta(before, after, 'webhook_delivery_lag_seconds'), 2);
    assert.equal(countDelta(before, after, 'webhook_delivery_attempt_seconds'), 2);
    assert.equal(after.value('calls_live', { direction: 'outbound' }), 0, 'nothing is live any more');
  });
});
