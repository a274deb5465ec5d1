import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { trace } from '@opentelemetry/api';
import { createLogger } from '../lib/logger.js';
import { tracedFetch } from '../lib/tracing/traced-fetch.js';
import { flushTracing, startTracing, stopTracing } from '../lib/tracing/tracing.js';
import { createFixture, type Fixture } from './support/api.js';
import { type AgentFixture, createAgentFixture } from './support/call-fixtures.js';
import { type CallStack, startCallStack, waitForCallEnd } from './support/call-stack.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './support/otlp-receiver.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// Traces (docs/operations.md, "Traces"), received the way a collector receives them: an OTLP/HTTP
// receiver in this process takes what the exporter sends. One `POST /calls` is one trace: the
// API's server span, the workflow start, the call workflow with its activities, and the webhook
// delivery of the call's events with its client span, every span's parent in the same trace.

let receiver: OtlpReceiver;
let spans: ReceivedSpan[] = [];
let stack: CallStack;
let owner: Fixture;
let agent: AgentFixture;
let webhooks: WebhookReceiver;
/** The workers' service log, as JSON lines. */
const logLines: Record<string, unknown>[] = [];

before(async () => {
  receiver = await startOtlpReceiver();
  spans = receiver.spans;
  // What an operator sets; the exporter reads the endpoint itself.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
  assert.equal(startTracing('tracing-test'), true);
  [stack, webhooks] = await Promise.all([
    startCallStack({
      prefix: 'tracing',
      webhooks: true,
      settings: { webhooksAllowPrivateTargets: true },
      logger: createLogger('info', { write: (line) => logLines.push(JSON.parse(line)) }),
    }),
    startWebhookReceiver(),
  ]);
  owner = await createFixture(stack.db.orm, { requestsPerSecond: 10_000 });
  agent = await createAgentFixture(stack.db.orm, { workspaceId: owner.workspaceId });
});

after(async () => {
  await stack?.close();
  await stopTracing();
  await webhooks?.close();
  receiver?.close();
});

test('one POST /calls is one trace: the request, the workflow start, the workflow, its activities and the webhook delivery', {
  timeout: 120_000,
}, async () => {
  const http = stack.api.client(owner.secret);
  const endpoint = await http.post('/webhooks', {
    url: `${webhooks.url}/traced`,
    events: ['call.completed'],
  });
  assert.equal(endpoint.status, 201);
  const placed = await http.post('/calls', { agent_id: agent.agentId, to: '+4790005678' });
  assert.equal(placed.status, 202, placed.text);
  const ended = await waitForCallEnd(http, placed.body.id, 60_000);
  assert.equal(ended.status, 'completed');
  for (const deadline = Date.now() + 30_000; !webhooks.requests.some((r) => r.path === '/traced'); ) {
    assert.ok(Date.now() < deadline, 'the webhook was delivered');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  const server = await spanNamed('POST /v1/calls');
  const traceId = server.traceId;
  assert.equal(server.kind, 2, 'a server span');
  assert.equal(attribute(server, 'http.route'), '/v1/calls');
  assert.equal(attribute(server, 'http.response.status_code'), 202);
  // The workflow start, the workflow and its activities, and the delivery: all in that trace.
  const inTrace = async (name: string) => {
    const span = await spanNamed(name, traceId);
    return span;
  };
  const start = await inTrace('StartWorkflow:callWorkflow');
  assert.equal(start.parentSpanId, server.spanId, 'the workflow start is a child of the request');
  await inTrace('RunWorkflow:callWorkflow');
  for (const activity of ['RunActivity:dial', 'RunActivity:markAnswered']) await inTrace(activity);
  const delivery = await inTrace('webhook delivery');
  assert.equal(delivery.kind, 3, 'a client span');
  assert.equal(attribute(delivery, 'http.response.status_code'), 200);
  assert.equal(attribute(delivery, 'event.type'), 'call.completed');
  await inTrace('RunActivity:attemptWebhookDelivery');
  // The workers' log lines written inside the trace name it: from a log line to its trace.
  const turns = logLines.filter((line) => line.msg === 'agent turn' && line.callId === placed.body.id);
  assert.ok(turns.length > 0, 'the agent took turns');
  for (const line of turns) assert.equal(line.trace_id, traceId);
  // Every span of the trace hangs from another of it, up to the request. A workflow's spans are
  // exported when its task completes, so a parent may arrive a moment after its child: wait for
  // the trace to be whole (a parent that never comes fails here, naming the child).
  const orphans = () => {
    const inTrace = spans.filter((s) => s.traceId === traceId);
    const ids = new Set(inTrace.map((s) => s.spanId));
    return inTrace.filter((s) => s !== server && !(s.parentSpanId && ids.has(s.parentSpanId)));
  };
  for (const deadline = Date.now() + 20_000; orphans().length > 0 && Date.now() < deadline; ) {
    await flushTracing();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.deepEqual(
    orphans().map((s) => s.name),
    [],
    'every span has its parent in the trace',
  );
});

test("requests to the service's dependencies (the model, speech) are client spans that carry traceparent", async () => {
  const { traceId, spanId } = await trace
    .getTracer('tracing-test')
    .startActiveSpan('an agent turn', async (parent) => {
      const response = await tracedFetch(`${webhooks.url}/model/chat/completions?secret=no`, {
        method: 'POST',
        body: '{}',
      });
      assert.equal(response.status, 200);
      parent.end();
      return parent.spanContext();
    });
  const sent = webhooks.requests.find((r) => r.path.startsWith('/model/chat/completions'));
  const traceparent = String(sent?.headers.traceparent ?? '');
  assert.match(traceparent, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  const client = await spanNamed('POST /model/chat/completions', traceId);
  assert.equal(client.kind, 3);
  assert.equal(client.parentSpanId, spanId);
  assert.equal(traceparent.split('-')[2], client.spanId, 'the request names the client span as its parent');
  assert.equal(attribute(client, 'url.full'), `${webhooks.url}/model/chat/completions`, 'never the query');
});

/** The first span named `name` (in `traceId`, when given), waiting for the exporter's batches. */
async function spanNamed(name: string, traceId?: string): Promise<ReceivedSpan> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    await flushTracing();
    const found = spans.find((s) => s.name === name && (!traceId || s.traceId === traceId));
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const names = [...new Set(spans.filter((s) => !traceId || s.traceId === traceId).map((s) => s.name))];
  assert.fail(`no span ${name}${traceId ? ` in trace ${traceId}` : ''}; spans: ${names.join(', ')}`);
}

function attribute(span: ReceivedSpan, key: string): string | number | undefined {
  const value = span.attributes.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  return value.stringValue ?? Number(value.intValue);
}

/** The spans of an OTLP/HTTP JSON export request. */
