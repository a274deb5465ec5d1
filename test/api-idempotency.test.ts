import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type ApiError,
  callOutcomeUnknown,
  callRejected,
  internalError,
  rateLimited,
} from '../api/http/errors.js';
import { defineRoute, type RouteDefinition } from '../api/http/route.js';
import { allRoutes } from '../api/routes/index.js';
import { Agent } from '../db/entities/index.js';
import { createFixture, type Fixture, startApi, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

// Test-only routes that fail on demand, run slowly, or keep a secret out of the stored answer.
const script: (() => Promise<{ status: number; body: unknown; storedBody?: unknown }>)[] = [];
let gate: Promise<void> = Promise.resolve();
let runs = 0;

const testRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'POST',
    path: '/test/scripted',
    operationId: 'scripted',
    summary: 'Runs the next scripted step.',
    scope: 'agents:write',
    body: { type: 'object', additionalProperties: false, properties: { n: { type: 'integer' } } },
    idempotent: true,
    responses: { 201: { description: 'ok' } },
    async handler() {
      runs++;
      const step = script.shift();
      return step ? step() : { status: 201, body: { run: runs } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/test/slow',
    operationId: 'slow',
    summary: 'Waits for the gate.',
    scope: 'agents:write',
    body: { type: 'object', additionalProperties: false, properties: { n: { type: 'integer' } } },
    idempotent: true,
    responses: { 201: { description: 'ok' } },
    async handler() {
      runs++;
      await gate;
      return { status: 201, body: { run: runs } };
    },
  }),
];

let db: TestDatabase;
let apiA: TestApi;
let apiB: TestApi;
let owner: Fixture;
before(async () => {
  db = await freshDatabase();
  // Two API processes' worth of apps on one database: the database must decide.
  apiA = await startApi({ orm: db.orm, routes: [...allRoutes, ...testRoutes] });
  apiB = await startApi({ orm: db.orm, routes: [...allRoutes, ...testRoutes] });
  owner = await createFixture(db.orm, { requestsPerSecond: 10_000 });
});
after(async () => {
  await apiA?.close();
  await apiB?.close();
  await db?.close();
});

const key = () => `key-${crypto.randomUUID()}`;
const a = () => apiA.client(owner.secret);
const b = () => apiB.client(owner.secret);
const countAgents = (name: string) => db.orm.em.fork().count(Agent, { name });

describe('POST /agents with an Idempotency-Key', () => {
  test('a retry gets the first answer byte for byte, marked replayed, and creates nothing', async () => {
    const k = key();
    const first = await a().post('/agents', { name: 'idem-1', language: 'en-GB' }, { 'idempotency-key': k });
    assert.equal(first.status, 201);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const again = await b().post('/agents', { language: 'en-GB', name: 'idem-1' }, { 'idempotency-key': k });
    assert.equal(again.status, 201);
    assert.equal(again.text, first.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.ok(again.headers.get('x-request-id'));
    assert.notEqual(again.headers.get('x-request-id'), first.headers.get('x-request-id'));
    assert.equal(await countAgents('idem-1'), 1);
  });

  test('the same key with another body is idempotency_key_reused', async () => {
    const k = key();
    await a().post('/agents', { name: 'idem-2' }, { 'idempotency-key': k });
    const res = await a().post('/agents', { name: 'idem-2b' }, { 'idempotency-key': k });
    assertApiError(res, 409, 'idempotency_key_reused', 'Idempotency-Key');
    assert.equal(res.body.error.type, 'idempotency_error');
    assert.equal(await countAgents('idem-2b'), 0);
  });

  test('the same key on another endpoint is idempotency_key_reused', async () => {
    const k = key();
    await a().post('/agents', { name: 'idem-3' }, { 'idempotency-key': k });
    assertApiError(
      await a().post('/test/scripted', {}, { 'idempotency-key': k }),
      409,
      'idempotency_key_reused',
      'Idempotency-Key',
    );
  });

  test('a path with an id of any length is stored with its key: a long garbled id gets its refusal, not a 500', async () => {
    // Schemathesis's stateful phase sent such a request; the path is part of the stored endpoint.
    const garbled = `${'%C3%A9x'.repeat(80)}-${'9'.repeat(200)}`;
    for (const [path, param] of [
      [`/webhooks/${garbled}/recover`, 'webhook_id'],
      [`/webhooks/${garbled}/deliveries/${garbled}/resend`, 'webhook_id'],
    ]) {
      const k = key();
      const first = await a().post(path, {}, { 'idempotency-key': k });
      assertApiError(first, 400, 'parameter_invalid', param);
      const again = await a().post(path, {}, { 'idempotency-key': k });
      assert.equal(again.text.replace(/req_\w+/, ''), first.text.replace(/req_\w+/, ''));
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
    }
  });

  test('keys are per workspace', async () => {
    const other = await createFixture(db.orm);
    const k = key();
    const mine = await a().post('/agents', { name: 'idem-4' }, { 'idempotency-key': k });
    const theirs = await apiA
      .client(other.secret)
      .post('/agents', { name: 'idem-4' }, { 'idempotency-key': k });
    assert.equal(theirs.status, 201);
    assert.equal(theirs.headers.get('idempotent-replayed'), null);
    assert.notEqual(theirs.body.id, mine.body.id);
  });

  test('a validation refusal is stored and replayed with its request id', async () => {
    const k = key();
    const first = await a().post('/agents', { name: 'x'.repeat(201) }, { 'idempotency-key': k });
    assertApiError(first, 400, 'parameter_invalid', 'name');
    const again = await b().post('/agents', { name: 'x'.repeat(201) }, { 'idempotency-key': k });
    assert.equal(again.text, first.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assertApiError(again, 400, 'parameter_invalid', 'name');
    // Fixing the request needs a new key.
    assertApiError(
      await a().post('/agents', { name: 'fixed' }, { 'idempotency-key': k }),
      409,
      'idempotency_key_reused',
      'Idempotency-Key',
    );
  });

  test('a body that is not JSON is fingerprinted as sent and its refusal stored', async () => {
    const k = key();
    const send = () =>
      a().request('POST', '/agents', {
        raw: '{nope',
        headers: { 'content-type': 'application/json', 'idempotency-key': k },
      });
    const first = await send();
    assertApiError(first, 400, 'body_invalid');
    const again = await send();
    assert.equal(again.text, first.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
  });

  test('a body nested too deeply to canonicalize is fingerprinted as sent; its refusal is stored', async () => {
    const k = key();
    const depth = 100_000;
    const send = () =>
      a().request('POST', '/agents', {
        raw: `{"name":${'['.repeat(depth)}${']'.repeat(depth)}}`,
        headers: { 'content-type': 'application/json', 'idempotency-key': k },
      });
    const first = await send();
    assertApiError(first, 400, 'parameter_invalid', 'name');
    const again = await send();
    assert.equal(again.text, first.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
  });

  test('keys up to 255 characters; longer or empty keys are parameter_invalid', async () => {
    const long = 'k'.repeat(255) + crypto.randomUUID();
    const ok = await a().post('/agents', { name: 'idem-5' }, { 'idempotency-key': long.slice(-255) });
    assert.equal(ok.status, 201);
    assertApiError(
      await a().post('/agents', { name: 'idem-5' }, { 'idempotency-key': `${long.slice(-255)}x` }),
      400,
      'parameter_invalid',
      'Idempotency-Key',
    );
    assertApiError(
      await a().post('/agents', { name: 'idem-5' }, { 'idempotency-key': '' }),
      400,
      'parameter_invalid',
      'Idempotency-Key',
    );
  });

  test('after 24 hours a key runs as new', async () => {
    const k = key();
    const first = await a().post('/agents', { name: 'idem-6' }, { 'idempotency-key': k });
    await db.orm.em
      .fork()
      .getConnection()
      .execute(
        `update idempotency_records set created_at = now() - interval '25 hours', expires_at = now() - interval '1 hour' where key = ?`,
        [k],
      );
    const later = await a().post('/agents', { name: 'idem-6' }, { 'idempotency-key': k });
    assert.equal(later.status, 201);
    assert.equal(later.headers.get('idempotent-replayed'), null);
    assert.notEqual(later.body.id, first.body.id);
    assert.equal(await countAgents('idem-6'), 2);
  });

  test('a concurrent duplicate on another process gets idempotency_request_in_progress', async () => {
    let open!: () => void;
    gate = new Promise((resolve) => {
      open = resolve;
    });
    const k = key();
    const first = a().post('/test/slow', { n: 1 }, { 'idempotency-key': k });
    // Wait until the first request holds the key.
    for (let i = 0; i < 100; i++) {
      const [row] = await db.orm.em
        .fork()
        .getConnection()
        .execute('select 1 from idempotency_records where key = ?', [k]);
      if (row) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    assertApiError(
      await b().post('/test/slow', { n: 1 }, { 'idempotency-key': k }),
      409,
      'idempotency_request_in_progress',
      'Idempotency-Key',
    );
    assertApiError(
      await a().post('/test/slow', { n: 1 }, { 'idempotency-key': k }),
      409,
      'idempotency_request_in_progress',
      'Idempotency-Key',
    );
    open();
    const done = await first;
    assert.equal(done.status, 201);
    const replay = await b().post('/test/slow', { n: 1 }, { 'idempotency-key': k });
    assert.equal(replay.text, done.text);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  });

  test('a burst of identical requests over two processes creates exactly one agent', async () => {
    const k = key();
    const responses = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        (i % 2 ? a() : b()).post('/agents', { name: 'idem-burst' }, { 'idempotency-key': k }),
      ),
    );
    assert.equal(await countAgents('idem-burst'), 1);
    const created = responses.filter((r) => r.status === 201);
    assert.ok(created.length >= 1);
    assert.equal(new Set(created.map((r) => r.text)).size, 1);
    assert.equal(created.filter((r) => r.headers.get('idempotent-replayed') === null).length, 1);
    for (const r of responses.filter((r) => r.status !== 201)) {
      assertApiError(r, 409, 'idempotency_request_in_progress', 'Idempotency-Key');
    }
  });

  test('a claim left by a crashed process is taken over once its lock lapses', async () => {
    const k = key();
    const fingerprintSource = await a().post('/agents', { name: 'idem-crash' }, { 'idempotency-key': k });
    assert.equal(fingerprintSource.status, 201);
    // Make the finished record look like one whose process died mid-request.
    const conn = db.orm.em.fork().getConnection();
    await conn.execute(
      `update idempotency_records set state = 'in_progress', response_status = null, response_body = null,
         locked_until = now() + interval '1 minute' where key = ?`,
      [k],
    );
    assertApiError(
      await a().post('/agents', { name: 'idem-crash' }, { 'idempotency-key': k }),
      409,
      'idempotency_request_in_progress',
      'Idempotency-Key',
    );
    await conn.execute(
      `update idempotency_records set locked_until = now() - interval '1 second' where key = ?`,
      [k],
    );
    const retried = await b().post('/agents', { name: 'idem-crash' }, { 'idempotency-key': k });
    assert.equal(retried.status, 201);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
    const replay = await a().post('/agents', { name: 'idem-crash' }, { 'idempotency-key': k });
    assert.equal(replay.text, retried.text);
  });

  test('endpoints that are not creating POSTs ignore the header, even one that is too long', async () => {
    const agent = (await a().post('/agents', { name: 'idem-ignored', system_prompt: 's' })).body;
    const header = { 'idempotency-key': 'x'.repeat(300) };
    for (const send of [
      () => a().get(`/agents/${agent.id}`, header),
      () => a().get('/agents', header),
      () => a().patch(`/agents/${agent.id}`, { description: 'd' }, header),
      () => a().post(`/agents/${agent.id}/publish`, undefined, header),
    ]) {
      for (let i = 0; i < 2; i++) {
        const res = await send();
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers.get('idempotent-replayed'), null);
      }
    }
    // PATCH ran each time (updated_at moves), nothing was replayed.
    const k = { 'idempotency-key': key() };
    const first = await a().patch(`/agents/${agent.id}`, { description: 'e' }, k);
    await new Promise((r) => setTimeout(r, 5));
    const second = await a().patch(`/agents/${agent.id}`, { description: 'e' }, k);
    assert.ok(Date.parse(second.body.updated_at) > Date.parse(first.body.updated_at));
    assert.equal((await a().delete(`/agents/${agent.id}`, header)).status, 200);
    assertApiError(await a().delete(`/agents/${agent.id}`, header), 404, 'resource_missing', 'agent_id');
    const [row] = await db.orm.em
      .fork()
      .getConnection()
      .execute('select count(*)::int as n from idempotency_records where key = ?', [k['idempotency-key']]);
    assert.equal(row.n, 0);
  });

  test('without a key, every POST creates', async () => {
    await a().post('/agents', { name: 'idem-none' });
    await a().post('/agents', { name: 'idem-none' });
    assert.equal(await countAgents('idem-none'), 2);
  });
});

describe('what is stored', () => {
  const thrower = (error: ApiError) => async () => {
    throw error;
  };

  for (const [label, error] of [
    ['a 5xx', internalError()],
    ['a 429', rateLimited(1)],
    ['a refusal whose reason can change', callRejected('The trial line is busy.')],
  ] as const) {
    test(`${label} is not stored: a retry with the same key runs again`, async () => {
      const k = key();
      script.push(thrower(error));
      const first = await a().post('/test/scripted', { n: 1 }, { 'idempotency-key': k });
      assert.equal(first.status, error.status);
      assert.equal(first.body.error.code, error.code);
      const retry = await a().post('/test/scripted', { n: 1 }, { 'idempotency-key': k });
      assert.equal(retry.status, 201);
      assert.equal(retry.headers.get('idempotent-replayed'), null);
      if (error.status === 429) assert.equal(first.headers.get('retry-after'), '1');
    });
  }

  test('an unexpected exception is a 500 internal_error and not stored', async () => {
    const k = key();
    script.push(async () => {
      throw new Error('boom');
    });
    assertApiError(
      await a().post('/test/scripted', { n: 2 }, { 'idempotency-key': k }),
      500,
      'internal_error',
    );
    assert.equal((await a().post('/test/scripted', { n: 2 }, { 'idempotency-key': k })).status, 201);
  });

  test('call_outcome_unknown is stored: the same key never runs again', async () => {
    const k = key();
    script.push(thrower(callOutcomeUnknown()));
    const first = await a().post('/test/scripted', { n: 3 }, { 'idempotency-key': k });
    assertApiError(first, 503, 'call_outcome_unknown');
    const before = runs;
    const again = await b().post('/test/scripted', { n: 3 }, { 'idempotency-key': k });
    assert.equal(again.text, first.text);
    assert.equal(again.headers.get('x-request-id'), first.body.request_id);
    assert.equal(runs, before);
  });

  test('storedBody keeps secrets out of the stored answer', async () => {
    const k = key();
    script.push(async () => ({ status: 201, body: { secret: 'whsec_abc' }, storedBody: { secret: null } }));
    const first = await a().post('/test/scripted', { n: 4 }, { 'idempotency-key': k });
    assert.deepEqual(first.body, { secret: 'whsec_abc' });
    const [row] = await db.orm.em
      .fork()
      .getConnection()
      .execute('select response_body from idempotency_records where key = ?', [k]);
    assert.ok(!String(row.response_body).includes('whsec_abc'));
    const again = await a().post('/test/scripted', { n: 4 }, { 'idempotency-key': k });
    assert.deepEqual(again.body, { secret: null });
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
  });
});
