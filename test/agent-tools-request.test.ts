import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { checkToolArguments } from '../lib/agent-tools/tool-arguments.js';
import {
  sendToolRequest,
  TOOL_RETRY_AFTER_MAX_MS,
  type ToolRequest,
} from '../lib/agent-tools/tool-request.js';
import { retryAfterMs } from '../lib/llm/openai-client.js';
import { toolCallsAllowed } from '../lib/temporal/tool-calls.js';
import { verifyWebhookSignature } from '../lib/webhooks/verify-signature.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// One attempt of a tool request (lib/agent-tools/tool-request.ts) against a real HTTP receiver:
// what each kind of answer means for the model and for a retry, the Retry-After a retry waits,
// the signature; and the arguments' check against the tool's JSON Schema.

let receiver: WebhookReceiver;
before(async () => {
  receiver = await startWebhookReceiver();
});
after(() => receiver.close());
beforeEach(() => {
  receiver.requests.length = 0;
});

const request = (overrides: Partial<ToolRequest> = {}): ToolRequest => ({
  url: `${receiver.url}/tool`,
  toolCallId: `tc_${'0'.repeat(31)}1`,
  callId: '00000000-0000-4000-8000-000000000001',
  agentId: '00000000-0000-4000-8000-000000000002',
  name: 'lookup',
  arguments: { order: 'A-1' },
  metadata: {},
  attempt: 1,
  secret: `tsec_${'cd'.repeat(32)}`,
  timeoutMs: 2_000,
  allowPrivate: true,
  ...overrides,
});

describe('what an answer means', () => {
  test('2xx: the body is the result, as text', async () => {
    receiver.answer = () => ({ status: 201, body: 'booked' });
    assert.deepEqual(await sendToolRequest(request()), {
      final: true,
      status: 'succeeded',
      responseStatus: 201,
      result: 'booked',
    });
  });

  test('429 with Retry-After: a passing failure that waits as asked, up to 5 s', async () => {
    receiver.answer = () => ({ status: 429, headers: { 'retry-after': '2' } });
    assert.deepEqual(await sendToolRequest(request()), {
      final: false,
      responseStatus: 429,
      error: 'HTTP 429',
      retryAfterMs: 2000,
    });
    receiver.answer = () => ({ status: 503, headers: { 'retry-after': '120' } });
    const capped = await sendToolRequest(request());
    assert.equal(capped.final, false);
    assert.equal(!capped.final && capped.retryAfterMs, 5000);
  });

  test('408 and 5xx, a timeout and a refused connection are passing failures; 4xx are refusals', async () => {
    for (const status of [408, 500, 502]) {
      receiver.answer = () => ({ status });
      const outcome = await sendToolRequest(request());
      assert.equal(outcome.final, false, `HTTP ${status}`);
    }
    for (const status of [400, 401, 404, 409, 422]) {
      receiver.answer = () => ({ status, body: `no ${status}` });
      assert.deepEqual(await sendToolRequest(request()), {
        final: true,
        status: 'refused',
        responseStatus: status,
        result: JSON.stringify({ error: 'tool_refused', status, body: `no ${status}` }),
      });
    }
    receiver.answer = () => ({ status: 200, hang: true });
    const timedOut = await sendToolRequest(request({ timeoutMs: 300 }));
    assert.deepEqual(timedOut, { final: false, responseStatus: null, error: 'no answer within 0.3 s' });
    const refused = await sendToolRequest(request({ url: 'http://127.0.0.1:1/tool' }));
    assert.equal(refused.final, false);
  });

  test('a refusal tells the model only the first KiB of the body', async () => {
    receiver.answer = () => ({ status: 400, body: 'é'.repeat(2000) });
    const outcome = await sendToolRequest(request());
    assert.ok(outcome.final);
    const told = JSON.parse(outcome.result);
    assert.equal(told.body, 'é'.repeat(512), 'cut on a character, 1024 bytes');
  });

  test('the headers: JSON, the idempotency key, the signature over the raw body', async () => {
    receiver.answer = () => ({ status: 200 });
    await sendToolRequest(request({ unixSeconds: Math.floor(Date.now() / 1000) }));
    const [seen] = receiver.requests;
    assert.equal(seen.headers['content-type'], 'application/json');
    assert.equal(seen.headers['idempotency-key'], `tc_${'0'.repeat(31)}1`);
    assert.match(seen.headers['voice-signature'] as string, /^t=\d+,v1=[0-9a-f]{64}$/);
    const check = verifyWebhookSignature({
      rawBody: seen.rawBody,
      signatureHeader: seen.headers['voice-signature'] as string,
      secret: `tsec_${'cd'.repeat(32)}`,
    });
    assert.ok(check.ok);
    const wrong = verifyWebhookSignature({
      rawBody: seen.rawBody,
      signatureHeader: seen.headers['voice-signature'] as string,
      secret: `tsec_${'ef'.repeat(32)}`,
    });
    assert.equal(wrong.ok, false);
  });

  test('Retry-After as an HTTP date, and unreadable values', () => {
    const retryAfter = (value: string) =>
      retryAfterMs(new Headers({ 'retry-after': value }), TOOL_RETRY_AFTER_MAX_MS);
    const inTwo = new Date(Date.now() + 2_000).toUTCString();
    const ms = retryAfter(inTwo)!;
    assert.ok(ms > 0 && ms <= 2_000, String(ms));
    assert.equal(retryAfter('soon'), undefined);
    assert.equal(retryAfterMs(new Headers(), TOOL_RETRY_AFTER_MAX_MS), undefined);
    assert.equal(retryAfter('0'), 0);
    assert.equal(retryAfter('120'), 5_000);
  });
});

describe("the arguments' check", () => {
  const schema = {
    type: 'object',
    properties: {
      day: { type: 'string', enum: ['monday', 'tuesday'] },
      people: { type: 'integer', minimum: 1 },
    },
    required: ['day'],
    additionalProperties: false,
  };

  test('arguments that fit', () => {
    assert.deepEqual(checkToolArguments('{"day":"monday","people":2}', schema), {
      ok: true,
      arguments: { day: 'monday', people: 2 },
    });
    assert.deepEqual(checkToolArguments('', { type: 'object' }), { ok: true, arguments: {} });
  });

  test("arguments that do not fit, and the schema's first complaint", () => {
    assert.deepEqual(checkToolArguments('{"day":"sunday"}', schema), {
      ok: false,
      arguments: { day: 'sunday' },
      details: '/day must be equal to one of the allowed values',
    });
    assert.equal(checkToolArguments('{}', schema).ok, false);
    assert.equal(checkToolArguments('{"day":"monday","extra":1}', schema).ok, false);
    assert.deepEqual(checkToolArguments('{"day":', schema), {
      ok: false,
      arguments: {},
      details: 'the arguments are not valid JSON',
    });
    assert.deepEqual(checkToolArguments('[1]', schema), {
      ok: false,
      arguments: {},
      details: 'the arguments must be a JSON object',
    });
  });
});

describe('the limits: 10 tool calls a turn, 50 a call', () => {
  const sent = (allowed: boolean[]) => allowed.filter(Boolean).length;

  test('within a turn: the first ten of twelve are sent, and none after ten were made', () => {
    assert.deepEqual(toolCallsAllowed(12, 0, 0), [...Array(10).fill(true), false, false]);
    assert.equal(sent(toolCallsAllowed(3, 8, 8)), 2);
    assert.equal(sent(toolCallsAllowed(1, 10, 10)), 0);
  });

  test('within a call: 47 made earlier leave three, whatever the turn allows', () => {
    assert.deepEqual(toolCallsAllowed(5, 0, 47), [true, true, true, false, false]);
    assert.equal(sent(toolCallsAllowed(1, 0, 50)), 0);
    assert.equal(sent(toolCallsAllowed(4, 0, 49)), 1);
  });
});
