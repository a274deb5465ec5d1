import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileToolParameters, toolParametersProblem } from '../lib/agent-tools/tool-parameters.js';
import { toolRequestHeaders, toolRequestSignature } from '../lib/agent-tools/tool-request-signature.js';
import { TOOL_NAME_PATTERN } from '../lib/agent-tools/tool-rules.js';
import { agentToolsProblem } from '../lib/agent-tools/tools-problem.js';
import { generateToolsSecret } from '../lib/agent-tools/tools-secret.js';
import { serviceSignature } from '../lib/webhooks/sign.js';
import { verifyWebhookSignature } from '../lib/webhooks/verify-signature.js';

// lib/agent-tools: the rules of an agent's tools that the API checks in its handler (and the call
// runtime reuses), the secret and the signer, without HTTP.

const publicUrl = 'https://93.184.215.14/tool';
const tool = (name: string, overrides: Record<string, unknown> = {}) => ({
  name,
  parameters: { type: 'object', properties: {} },
  url: publicUrl,
  ...overrides,
});

describe('a tool’s parameters', () => {
  test('an object schema compiles, and checks arguments as the runtime will', () => {
    const compiled = compileToolParameters({
      type: 'object',
      properties: { date: { type: 'string', format: 'date' }, party: { type: 'integer', minimum: 1 } },
      required: ['date'],
      additionalProperties: false,
      example: { date: '2026-12-01' }, // unknown keywords are annotations (strict mode off)
    });
    assert.ok(compiled.ok);
    assert.equal(compiled.validate({ date: '2026-12-01', party: 2 }), true);
    assert.equal(compiled.validate({ date: 'tomorrow' }), false);
    assert.equal(compiled.validate({ party: 2 }), false);
  });

  test('each refusal says what is wrong', () => {
    const cases: [unknown, RegExp][] = [
      [[], /must be a JSON Schema object/],
      ['{"type":"object"}', /must be a JSON Schema object/],
      [{ properties: {} }, /"type": "object"/],
      [{ type: ['object', 'null'] }, /"type": "object"/],
      [
        { type: 'object', properties: { a: { type: 'day' } } },
        /valid JSON Schema \(draft 2020-12\): schema is invalid/,
      ],
      [{ type: 'object', $ref: 'https://example.com/remote' }, /can't resolve reference/],
      [{ type: 'object', description: 'x'.repeat(16 * 1024) }, /at most 16 KiB/],
    ];
    for (const [parameters, says] of cases) {
      assert.match(
        toolParametersProblem(parameters) ?? 'accepted',
        says,
        JSON.stringify(parameters).slice(0, 80),
      );
    }
  });

  test('16 KiB exactly passes; the size counts UTF-8 bytes', () => {
    const room = 16 * 1024 - JSON.stringify({ type: 'object', description: '' }).length;
    assert.equal(toolParametersProblem({ type: 'object', description: 'x'.repeat(room) }), null);
    assert.match(toolParametersProblem({ type: 'object', description: 'å'.repeat(room) }) ?? '', /16 KiB/);
  });

  test('nesting is bounded before anything recurses: 300,000 levels are refused at once, not a stack overflow', () => {
    let deep: unknown = [];
    for (let i = 0; i < 300_000; i++) deep = [deep];
    const started = Date.now();
    assert.match(toolParametersProblem({ type: 'object', x: deep }) ?? '', /nested at most 64 levels/);
    assert.ok(Date.now() - started < 1_000);
  });

  test('a schema’s $id is not kept: the same one compiles again, for another agent', () => {
    const withId = () => ({
      $id: 'https://example.com/s',
      type: 'object',
      properties: { a: { $id: 'https://example.com/a' } },
    });
    assert.equal(toolParametersProblem(withId()), null);
    assert.equal(toolParametersProblem(withId()), null);
  });
});

describe('the tools of one request', () => {
  const policy = { allowPrivate: false };

  test('none, or good ones, pass', async () => {
    assert.equal(await agentToolsProblem([], policy), null);
    assert.equal(await agentToolsProblem([tool('a'), tool('b')], policy), null);
  });

  test('the first problem in document order, tool by tool, field by field, with its param', async () => {
    assert.deepEqual(await agentToolsProblem([tool('a'), tool('b'), tool('a')], policy), {
      param: 'tools[2].name',
      message: 'tools[2].name must be unique: another tool is named a.',
    });
    const badUrlFirst = [tool('a', { url: 'http://93.184.215.14/' }), tool('b', { parameters: {} })];
    assert.equal((await agentToolsProblem(badUrlFirst, policy))?.param, 'tools[0].url');
    const badParametersFirst = [tool('a', { parameters: {}, url: 'https://10.0.0.1/' })];
    assert.equal((await agentToolsProblem(badParametersFirst, policy))?.param, 'tools[0].parameters');
  });

  test('URLs follow the webhook rules; the refusal names the tool’s field and never an address', async () => {
    for (const url of ['https://10.0.0.1/', 'https://localhost/x', 'https://intranet/x', 'https://[::1]/x']) {
      assert.deepEqual(await agentToolsProblem([tool('a', { url })], policy), {
        param: 'tools[0].url',
        message: 'tools[0].url is not allowed: tools are called at public https addresses only.',
      });
    }
    assert.deepEqual(await agentToolsProblem([tool('a', { url: 'http://93.184.215.14/' })], policy), {
      param: 'tools[0].url',
      message: 'tools[0].url must use https.',
    });
    // WEBHOOKS_ALLOW_PRIVATE_TARGETS allows them for tools too.
    assert.equal(
      await agentToolsProblem([tool('a', { url: 'http://127.0.0.1:9/' })], { allowPrivate: true }),
      null,
    );
  });

  test('the name pattern: the spec’s, less the built-in tools’ names', () => {
    const pattern = new RegExp(TOOL_NAME_PATTERN);
    for (const name of ['a', 'A_1', `a${'b'.repeat(63)}`, 'end_call_2', 'transfer_calls', 'End_call'])
      assert.ok(pattern.test(name), name);
    for (const name of ['', '1a', '_a', 'a-b', `a${'b'.repeat(64)}`, 'end_call', 'transfer_call', 'å'])
      assert.ok(!pattern.test(name), name);
  });
});

describe('the tools secret and the signed request', () => {
  test('a secret is tsec_ and 64 hex, new each time', () => {
    const a = generateToolsSecret();
    assert.match(a, /^tsec_[0-9a-f]{64}$/);
    assert.notEqual(a, generateToolsSecret());
  });

  test('Voice-Signature is the webhooks’ scheme keyed with the tools secret; the server-side check accepts it', () => {
    const secret = generateToolsSecret();
    const body = Buffer.from('{"object":"tool_call","arguments":{"q":"blåbær"}}');
    const signature = toolRequestSignature(secret, body, 1_795_774_800);
    assert.equal(signature, serviceSignature(secret, body, 1_795_774_800));
    assert.match(signature, /^t=1795774800,v1=[0-9a-f]{64}$/);
    const check = verifyWebhookSignature({
      rawBody: body,
      signatureHeader: signature,
      secret,
      nowSeconds: 1_795_774_810,
    });
    assert.deepEqual(check, { ok: true, timestamp: 1_795_774_800 });
    assert.deepEqual(toolRequestHeaders({ secret, body, toolCallId: 'tc_1', unixSeconds: 1_795_774_800 }), {
      'Content-Type': 'application/json',
      'Idempotency-Key': 'tc_1',
      'Voice-Signature': signature,
    });
  });
});
