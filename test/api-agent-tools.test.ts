import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import dnsPromises from 'node:dns/promises';
import { syncBuiltinESMExports } from 'node:module';
import { after, before, describe, mock, test } from 'node:test';
import { Agent } from '../db/entities/index.js';
import { closeApiAndDatabase, createFixture, type Fixture, startApi, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

// Agent tools through the API (agent-tools spec sections 1 and 2): the field on every Agent, each
// refusal with its exact param, nothing written on a refusal, and the tools secret. Tool URLs are
// checked under the webhook URL rules, so the API runs with private targets refused.

let db: TestDatabase;
let api: TestApi;
let owner: Fixture;
before(async () => {
  db = await freshDatabase();
  api = await startApi({ orm: db.orm, settings: { webhooksAllowPrivateTargets: false } });
  owner = await createFixture(db.orm, { requestsPerSecond: 10_000 });
});
after(() => closeApiAndDatabase(api, db));

const client = () => api.client(owner.secret);

const tool = (overrides: Record<string, unknown> = {}) => ({
  name: 'check_availability',
  description: 'Free slots for a day.',
  parameters: {
    type: 'object',
    properties: { date: { type: 'string', format: 'date' } },
    required: ['date'],
  },
  url: 'https://93.184.215.14/tools/availability',
  ...overrides,
});

async function createAgent(body: Record<string, unknown> = {}) {
  const res = await client().post('/agents', { name: 'Booker', ...body });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

describe('tools on the Agent', () => {
  test('an agent has no tools by default, in every answer', async () => {
    const agent = await createAgent();
    assert.deepEqual(agent.tools, []);
    assert.deepEqual((await client().get(`/agents/${agent.id}`)).body.tools, []);
    const listed = (await client().get('/agents?limit=100')).body.data.find(
      (a: { id: string }) => a.id === agent.id,
    );
    assert.deepEqual(listed.tools, []);
  });

  test('POST stores tools with their defaults; GET and the list show them', async () => {
    const agent = await createAgent({
      tools: [
        tool(),
        tool({
          type: 'function',
          name: 'book',
          timeout_seconds: 30,
          speak_while_waiting: 'One moment while I book that.',
        }),
      ],
    });
    assert.deepEqual(agent.tools, [
      {
        type: 'function',
        name: 'check_availability',
        description: 'Free slots for a day.',
        parameters: tool().parameters,
        url: 'https://93.184.215.14/tools/availability',
        timeout_seconds: 10,
        speak_while_waiting: null,
      },
      {
        type: 'function',
        name: 'book',
        description: 'Free slots for a day.',
        parameters: tool().parameters,
        url: 'https://93.184.215.14/tools/availability',
        timeout_seconds: 30,
        speak_while_waiting: 'One moment while I book that.',
      },
    ]);
    assert.deepEqual((await client().get(`/agents/${agent.id}`)).body, agent);
    const listed = (await client().get('/agents?limit=100')).body.data.find(
      (a: { id: string }) => a.id === agent.id,
    );
    assert.deepEqual(listed, agent);
    const stored = await db.orm.em.fork().findOneOrFail(Agent, { id: agent.id });
    assert.equal(stored.tools[1]!.timeoutSeconds, 30);
  });

  test('PATCH replaces the whole array; [] removes every tool; other fields leave tools alone', async () => {
    const agent = await createAgent({ tools: [tool(), tool({ name: 'book' })] });
    const renamed = await client().patch(`/agents/${agent.id}`, { name: 'Renamed' });
    assert.equal(renamed.body.tools.length, 2);
    const replaced = await client().patch(`/agents/${agent.id}`, { tools: [tool({ name: 'cancel' })] });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual(
      replaced.body.tools.map((t: { name: string }) => t.name),
      ['cancel'],
    );
    const cleared = await client().patch(`/agents/${agent.id}`, { tools: [] });
    assert.deepEqual(cleared.body.tools, []);
  });

  test('20 tools pass; 21 are parameter_invalid tools', async () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => tool({ name: `tool_${i}` }));
    assert.equal((await client().post('/agents', { name: 'n', tools: many(20) })).status, 201);
    assertApiError(
      await client().post('/agents', { name: 'n', tools: many(21) }),
      400,
      'parameter_invalid',
      'tools',
    );
  });

  const refusals: [string, Record<string, unknown>[], string, string?][] = [
    [
      'a name not matching the pattern',
      [tool(), tool({ name: 'b' }), tool({ name: '9lives' })],
      'tools[2].name',
    ],
    ['a name with a hyphen', [tool({ name: 'check-availability' })], 'tools[0].name'],
    ['a name of 65 characters', [tool({ name: `a${'b'.repeat(64)}` })], 'tools[0].name'],
    ['an empty name', [tool({ name: '' })], 'tools[0].name'],
    ['a duplicate name', [tool(), tool({ name: 'book' }), tool()], 'tools[2].name', 'unique'],
    ['the reserved end_call', [tool(), tool({ name: 'end_call' })], 'tools[1].name', 'end_call'],
    ['the reserved transfer_call', [tool({ name: 'transfer_call' })], 'tools[0].name', 'transfer_call'],
    [
      'parameters without "type": "object"',
      [tool({ parameters: { properties: {} } })],
      'tools[0].parameters',
    ],
    ['parameters of "type": "string"', [tool({ parameters: { type: 'string' } })], 'tools[0].parameters'],
    [
      'parameters that are no valid schema',
      [tool({ parameters: { type: 'object', properties: { date: { type: 'day' } } } })],
      'tools[0].parameters',
      'valid JSON Schema',
    ],
    [
      'parameters with a broken pattern',
      [tool({ parameters: { type: 'object', properties: { a: { type: 'string', pattern: '(' } } } })],
      'tools[0].parameters',
    ],
    [
      'parameters larger than 16 KiB',
      [tool({ parameters: { type: 'object', description: 'x'.repeat(16 * 1024) } })],
      'tools[0].parameters',
      '16 KiB',
    ],
    ['parameters that are an array', [tool({ parameters: [] })], 'tools[0].parameters'],
    ['an http url', [tool(), tool({ name: 'b', url: 'http://93.184.215.14/x' })], 'tools[1].url', 'https'],
    ['a url that is not one', [tool({ url: 'not a url' })], 'tools[0].url'],
    [
      'a private address',
      [tool(), tool({ name: 'b', url: 'https://10.1.2.3/x' })],
      'tools[1].url',
      'not allowed',
    ],
    ['loopback', [tool({ url: 'https://127.0.0.1:8443/x' })], 'tools[0].url', 'not allowed'],
    ['localhost', [tool({ url: 'https://localhost/x' })], 'tools[0].url', 'not allowed'],
    ['a name without a dot', [tool({ url: 'https://intranet/x' })], 'tools[0].url', 'not allowed'],
    ['credentials in the url', [tool({ url: 'https://a:b@93.184.215.14/x' })], 'tools[0].url'],
    ['timeout_seconds 0', [tool({ timeout_seconds: 0 })], 'tools[0].timeout_seconds'],
    ['timeout_seconds 31', [tool({ timeout_seconds: 31 })], 'tools[0].timeout_seconds'],
    ['timeout_seconds 1.5', [tool({ timeout_seconds: 1.5 })], 'tools[0].timeout_seconds'],
    [
      'speak_while_waiting of 201 characters',
      [tool({ speak_while_waiting: 'å'.repeat(201) })],
      'tools[0].speak_while_waiting',
    ],
    ['an empty description', [tool({ description: '' })], 'tools[0].description'],
    ['a description of 1001 characters', [tool({ description: 'd'.repeat(1001) })], 'tools[0].description'],
    ['a type other than function', [tool({ type: 'retrieval' })], 'tools[0].type'],
    ['tools that are not an array', 'x' as never, 'tools'],
  ];
  for (const [what, tools, param, says] of refusals) {
    test(`${what}: 400 parameter_invalid ${param}, on POST and PATCH, nothing written`, async () => {
      const created = await client().post('/agents', { name: 'refused', tools });
      assertApiError(created, 400, 'parameter_invalid', param);
      if (says) assert.match(created.body.error.message, new RegExp(says), created.text);
      const agent = await createAgent({ tools: [tool({ name: 'kept' })] });
      const patched = await client().patch(`/agents/${agent.id}`, { name: 'changed', tools });
      assertApiError(patched, 400, 'parameter_invalid', param);
      assert.deepEqual((await client().get(`/agents/${agent.id}`)).body, agent);
    });
  }

  test('the edges pass: timeout 1 and 30, 200 characters while waiting, 1000 of description, 16 KiB of parameters', async () => {
    const padding = 16 * 1024 - JSON.stringify({ type: 'object', description: '' }).length;
    const agent = await createAgent({
      tools: [
        tool({ timeout_seconds: 1, speak_while_waiting: 'å'.repeat(200), description: 'd'.repeat(1000) }),
        tool({
          name: 'b',
          timeout_seconds: 30,
          parameters: { type: 'object', description: 'x'.repeat(padding) },
        }),
        tool({ name: `A${'_'.repeat(63)}`, speak_while_waiting: null }),
      ],
    });
    assert.equal(agent.tools.length, 3);
  });

  test('a missing required field is parameter_missing; an unknown one parameter_unknown, naming the tool', async () => {
    const { url: _url, ...withoutUrl } = tool();
    assertApiError(
      await client().post('/agents', { name: 'n', tools: [tool(), withoutUrl] }),
      400,
      'parameter_missing',
      'tools[1].url',
    );
    assertApiError(
      await client().post('/agents', { name: 'n', tools: [tool({ foo: 1 })] }),
      400,
      'parameter_unknown',
      'tools[0].foo',
    );
    const agent = await createAgent();
    assertApiError(
      await client().patch(`/agents/${agent.id}`, {
        tools: [tool(), tool({ name: 'b', timeoutSeconds: 5 })],
      }),
      400,
      'parameter_unknown',
      'tools[1].timeoutSeconds',
    );
  });

  test('a name that resolves to a private address is refused, as for webhook endpoints', async () => {
    const lookup = mock.method(dnsPromises, 'lookup', async () => [{ address: '192.168.1.20', family: 4 }]);
    syncBuiltinESMExports();
    try {
      const res = await client().post('/agents', {
        name: 'n',
        tools: [tool({ url: 'https://tools.example.com/x' })],
      });
      assertApiError(res, 400, 'parameter_invalid', 'tools[0].url');
      assert.doesNotMatch(res.body.error.message, /192\.168/);
      assert.ok(lookup.mock.callCount() >= 1);
    } finally {
      lookup.mock.restore();
      syncBuiltinESMExports();
    }
  });

  test('a 1 MiB parameters object, or one nested deeply, is refused at once as a 400', async () => {
    const big = { type: 'object', description: 'x'.repeat(1024 * 1024 - 200) };
    let started = Date.now();
    const res = await client().post('/agents', { name: 'n', tools: [tool({ parameters: big })] });
    assertApiError(res, 400, 'parameter_invalid', 'tools[0].parameters');
    assert.ok(Date.now() - started < 2_000, `${Date.now() - started} ms`);
    const raw = `{"name":"n","tools":[{"name":"a","description":"d","url":"https://93.184.215.14/","parameters":{"type":"object","x":${'['.repeat(300_000)}${']'.repeat(300_000)}}}]}`;
    started = Date.now();
    const deep = await client().request('POST', '/agents', {
      raw,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(
      deep.status,
      400,
      `${deep.text.slice(0, 300)} ${JSON.stringify(api.logs.filter((l) => l.level === 'error')).slice(0, 3000)}`,
    );
    assert.ok(Date.now() - started < 2_000, `${Date.now() - started} ms`);
    const nested = { type: 'object', properties: {} as Record<string, unknown> };
    let node = nested.properties;
    for (let i = 0; i < 100; i++) {
      const inner: Record<string, unknown> = {};
      node.a = { type: 'object', properties: inner };
      node = inner;
    }
    assertApiError(
      await client().post('/agents', { name: 'n', tools: [tool({ parameters: nested })] }),
      400,
      'parameter_invalid',
      'tools[0].parameters',
    );
  });

  test('a schema $id may be used by two agents (nothing of a schema stays behind)', async () => {
    const parameters = { $id: 'https://example.com/schemas/slot', type: 'object', properties: {} };
    await createAgent({ tools: [tool({ parameters })] });
    await createAgent({ tools: [tool({ parameters })] });
  });
});

describe('POST /agents/{agent_id}/tools-secret', () => {
  const secretPattern = /^tsec_[0-9a-f]{64}$/;

  test('answers a new secret once, stores it, and a new one replaces it at once', async () => {
    const agent = await createAgent();
    const first = await client().post(`/agents/${agent.id}/tools-secret`);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(Object.keys(first.body).sort(), ['agent_id', 'object', 'secret']);
    assert.equal(first.body.object, 'tools_secret');
    assert.equal(first.body.agent_id, agent.id);
    assert.match(first.body.secret, secretPattern);
    const stored = async () => (await db.orm.em.fork().findOneOrFail(Agent, { id: agent.id })).toolsSecret;
    assert.equal(await stored(), first.body.secret);

    const second = await client().post(`/agents/${agent.id}/tools-secret`);
    assert.match(second.body.secret, secretPattern);
    assert.notEqual(second.body.secret, first.body.secret);
    assert.equal(await stored(), second.body.secret);

    // Never in any other answer, nor in the logs.
    const read = await client().get(`/agents/${agent.id}`);
    const listed = await client().get('/agents?limit=100');
    for (const text of [read.text, listed.text, JSON.stringify(api.logs)]) {
      assert.ok(!text.includes(second.body.secret));
      assert.ok(!text.includes('tsec_'));
    }
    assert.ok(!('tools_secret' in read.body));
  });

  test('an Idempotency-Key replays the answer with secret null and makes no new secret', async () => {
    const agent = await createAgent();
    const key = `tools-secret-${randomBytes(4).toString('hex')}`;
    const first = await client().post(`/agents/${agent.id}/tools-secret`, undefined, {
      'Idempotency-Key': key,
    });
    assert.equal(first.status, 200, first.text);
    assert.match(first.body.secret, secretPattern);
    const replay = await client().post(`/agents/${agent.id}/tools-secret`, undefined, {
      'Idempotency-Key': key,
    });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, { object: 'tools_secret', agent_id: agent.id, secret: null });
    const stored = await db.orm.em.fork().findOneOrFail(Agent, { id: agent.id });
    assert.equal(stored.toolsSecret, first.body.secret);
    // The same key on another agent is another request.
    const other = await createAgent();
    assertApiError(
      await client().post(`/agents/${other.id}/tools-secret`, undefined, { 'Idempotency-Key': key }),
      409,
      'idempotency_key_reused',
      'Idempotency-Key',
    );
  });

  test('a viewer’s key is 403 role_required; a key without agents:write 403 missing_scope', async () => {
    const agent = await createAgent();
    const viewer = await createFixture(db.orm, { workspaceId: owner.workspaceId, role: 'viewer' });
    assertApiError(
      await api.client(viewer.secret).post(`/agents/${agent.id}/tools-secret`),
      403,
      'role_required',
    );
    const reader = await createFixture(db.orm, { workspaceId: owner.workspaceId, scopes: ['agents:read'] });
    assertApiError(
      await api.client(reader.secret).post(`/agents/${agent.id}/tools-secret`),
      403,
      'missing_scope',
    );
    assertApiError(await api.client().post(`/agents/${agent.id}/tools-secret`), 401, 'api_key_missing');
    const stored = await db.orm.em.fork().findOneOrFail(Agent, { id: agent.id });
    assert.equal(stored.toolsSecret, null);
  });

  test('an unknown agent, a deleted one or another workspace’s is 404 resource_missing', async () => {
    assertApiError(
      await client().post(`/agents/${crypto.randomUUID()}/tools-secret`),
      404,
      'resource_missing',
      'agent_id',
    );
    const deleted = await createAgent();
    await client().delete(`/agents/${deleted.id}`);
    assertApiError(
      await client().post(`/agents/${deleted.id}/tools-secret`),
      404,
      'resource_missing',
      'agent_id',
    );
    const stranger = await createFixture(db.orm);
    const agent = await createAgent();
    assertApiError(
      await api.client(stranger.secret).post(`/agents/${agent.id}/tools-secret`),
      404,
      'resource_missing',
      'agent_id',
    );
    assertApiError(
      await client().post('/agents/not-a-uuid/tools-secret'),
      400,
      'parameter_invalid',
      'agent_id',
    );
  });
});
