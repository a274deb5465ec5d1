import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Call, Event, IdempotencyRecord } from '../db/entities/index.js';
import { type Orm, openOrm } from '../db/orm.js';
import { setLimits } from '../lib/accounts.js';
import { STALE_QUEUED_SECONDS } from '../lib/calls/call-limits.js';
import { expireStaleQueuedCalls } from '../lib/calls/expire-queued-calls.js';
import { createLogger } from '../lib/logger.js';
import { callWorkflowId, farEndWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { createFixture, type Fixture, startApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { type AgentFixture, createAgentFixture } from './support/call-fixtures.js';
import { type CallStack, startCallStack, waitForCallEnd } from './support/call-stack.js';
import { type DatabaseOutage, databaseOutage } from './support/database-outage.js';

// PostgreSQL goes away under a running service (issue 14): the pool must recover by itself,
// answers must be 503 with the spec's codes (never 500), and no Idempotency-Key may dial twice,
// whatever moment the database drops.

let stack: CallStack;
let outage: DatabaseOutage;
let owner: Fixture;
let agent: AgentFixture;
let toSeq = 0;
const callee = () => `+4791${String(++toSeq).padStart(4, '0')}5678`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

before(async () => {
  stack = await startCallStack({ prefix: 'db-outage', simTimeScale: 0.01 });
  outage = await databaseOutage(stack.db);
  owner = await createFixture(stack.db.orm, { requestsPerSecond: 10_000 });
  agent = await createAgentFixture(stack.db.orm, { workspaceId: owner.workspaceId });
  await setLimits(stack.db.orm.em.fork(), {
    workspaceId: owner.workspaceId,
    callsPerMinute: 10_000,
    callsPerDay: 100_000,
  });
});
after(async () => {
  await outage?.close();
  await stack?.close();
});

/** Resolves with `promise`, or fails the test when it takes longer than `ms`. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** "LOCK_MS later": the claims of requests that went quiet may be taken over now. */
async function expireIdempotencyLocks(orm: Orm) {
  await orm.em.getConnection().execute('update idempotency_records set locked_until = now()');
}

const callsWithKey = async (key: string) =>
  (await stack.db.orm.em.fork().find(Call, { workspace: owner.workspaceId })).filter(
    (call) => call.metadata.key === key,
  );

describe('the ORM pool', () => {
  test('connections lost inside transactions are given back: the pool serves again by itself', async () => {
    const orm = await openOrm(stack.db.url, { poolMax: 10 });
    try {
      // Ten transactions hold all ten connections; five fail at COMMIT, five at ROLLBACK.
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let open = 0;
      const transactions = Array.from({ length: 10 }, (_, i) =>
        orm.em.fork().transactional(async (em) => {
          await em.execute('select 1');
          open++;
          await gate;
          if (i % 2 === 0) throw new Error('the work failed: roll back');
          // COMMIT runs on the dead connection after this returns.
        }),
      );
      while (open < 10) await sleep(10);
      await outage.begin();
      await outage.end();
      release();
      const results = await Promise.allSettled(transactions);
      assert.ok(results.every((result) => result.status === 'rejected'));

      const rows = await within(
        10_000,
        'a query after the outage',
        orm.em.getConnection().execute<{ one: number }[]>('select 1 as one'),
      );
      assert.equal(rows[0].one, 1);
      // Every slot is usable again: ten queries at once all get a connection.
      await within(
        10_000,
        'ten queries at once',
        Promise.all(
          Array.from({ length: 10 }, () => orm.em.getConnection().execute('select pg_sleep(0.05)')),
        ),
      );
    } finally {
      await orm.close(true);
    }
  });
});

describe('the API while PostgreSQL is down', () => {
  test('503 upstream_unavailable with Retry-After for a checked key, auth_unavailable for an unchecked one; never 500', async () => {
    const http = stack.api.client(owner.secret);
    assert.equal((await http.get('/me')).status, 200); // the key is now cached
    const unchecked = await createFixture(stack.db.orm);
    await outage.begin();
    try {
      for (const res of [
        await http.get('/calls'),
        await http.get(`/calls/${randomUUID()}`),
        await http.post('/calls', { agent_id: agent.agentId, to: callee() }),
        await http.post(
          '/calls',
          { agent_id: agent.agentId, to: callee() },
          { 'Idempotency-Key': randomUUID() },
        ),
        await http.post('/agents', { name: 'Down' }),
      ]) {
        assertApiError(res, 503, 'upstream_unavailable');
        assert.equal(res.body.error.type, 'api_error');
        assert.equal(res.headers.get('retry-after'), '2');
      }
      const res = await stack.api.client(unchecked.secret).get('/calls');
      assertApiError(res, 503, 'auth_unavailable');
      assert.equal(res.headers.get('retry-after'), '2');
    } finally {
      await outage.end();
    }
    assert.equal((await within(10_000, 'GET /calls after', http.get('/calls'))).status, 200);
  });

  test('40 POST /calls with keys, connections cut mid-burst: only 202 or 503, the API recovers, one call per key, every call ends', async () => {
    const http = stack.api.client(owner.secret);
    const keys = Array.from({ length: 40 }, () => randomUUID());
    const to = new Map<string, string>(keys.map((key) => [key, callee()]));
    const post = (key: string) =>
      http.post(
        '/calls',
        { agent_id: agent.agentId, to: to.get(key), metadata: { key } },
        { 'Idempotency-Key': key },
      );
    const burst = keys.map((key) => post(key));
    await sleep(30);
    await outage.begin();
    await sleep(3000);
    await outage.end();
    const first = await within(30_000, 'the burst', Promise.all(burst));
    for (const res of first) {
      assert.ok(
        res.status === 202 ||
          (res.status === 503 &&
            ['upstream_unavailable', 'auth_unavailable'].includes(res.body.error.code)) ||
          (res.status === 409 && res.body.error.code === 'idempotency_request_in_progress'),
        `unexpected answer ${res.status} ${res.text}`,
      );
    }

    // The API serves again by itself: a key it never saw is checked against the database.
    const fresh = await createFixture(stack.db.orm);
    const me = await within(10_000, 'GET /me with a fresh key', stack.api.client(fresh.secret).get('/me'));
    assert.equal(me.status, 200);

    // Every client retries its key until it gets an answer that stands (LOCK_MS passes first).
    // As the spec tells clients: a 503 is retried with backoff (a loaded machine can still be
    // working off the burst), with the same key.
    await expireIdempotencyLocks(stack.db.orm);
    const untilItStands = async (key: string) => {
      for (let attempt = 0; ; attempt++) {
        const res = await post(key);
        if (res.status !== 503 || attempt >= 8) return res;
        assert.ok(['upstream_unavailable', 'auth_unavailable'].includes(res.body.error.code), res.text);
        await sleep(250 * 2 ** attempt);
      }
    };
    const finals = await Promise.all(keys.map(untilItStands));
    for (const [i, res] of finals.entries()) {
      assert.equal(res.status, 202, `key ${i}: ${res.text}`);
      const calls = await callsWithKey(keys[i]);
      assert.equal(calls.length, 1, `key ${i} has exactly one call`);
      assert.equal(res.body.id, calls[0].id);
      if (first[i].status === 202) assert.equal(first[i].body.id, calls[0].id);
    }
    const em = stack.db.orm.em.fork();
    for (const res of finals) {
      const ended = await waitForCallEnd(http, res.body.id);
      assert.ok(['completed', 'failed'].includes(ended.status));
      // The final event is written just after the final status: wait for the workflow to finish.
      await within(
        30_000,
        'the call workflow',
        stack.client.workflow.getHandle(callWorkflowId(res.body.id)).result(),
      );
      const finalEvents = await em.count(Event, {
        call: res.body.id,
        type: { $in: ['call.completed', 'call.failed'] },
      });
      assert.equal(finalEvents, 1, `call ${res.body.id} has exactly one final event`);
    }
  });
});

describe('an Idempotency-Key never dials twice, whenever the database drops', () => {
  /**
   * POST /calls with a new key through an API whose Temporal client cuts the database the moment
   * the call's workflow is started (and, with `startFails`, then fails as a dying process would).
   * The database is back and that API closed when it returns.
   */
  async function postLosingTheDatabaseAtStart(options: { startFails: boolean }) {
    const api = await startApi({
      orm: stack.db.orm,
      settings: stack.settings,
      temporal: async () => {
        await outage.begin();
        if (options.startFails) throw new Error('the process died before the workflow start');
        return stack.client;
      },
    });
    const key = randomUUID();
    const body = { agent_id: agent.agentId, to: callee(), metadata: { key } };
    try {
      const res = await api.client(owner.secret).post('/calls', body, { 'Idempotency-Key': key });
      return { key, body, res };
    } finally {
      await outage.end();
      await api.close();
    }
  }

  async function workflowRuns(client: Client, callId: string): Promise<number> {
    let runs = 0;
    for await (const _ of client.workflow.list({ query: `WorkflowId = '${callWorkflowId(callId)}'` })) runs++;
    return runs;
  }

  test('the call commits, the answer cannot be finalised: a retry resumes it and replays 202, one call', async () => {
    const { key, body, res } = await postLosingTheDatabaseAtStart({ startFails: false });
    assert.equal(res.status, 202, res.text);
    const record = await stack.db.orm.em.fork().findOneOrFail(IdempotencyRecord, { key });
    assert.equal(record.state, 'committed', 'the call and its answer committed; the confirmation did not');
    assert.equal(record.resourceId, res.body.id);

    const http = stack.api.client(owner.secret);
    // While the first request's claim holds, a retry is told to wait.
    const waiting = await http.post('/calls', body, { 'Idempotency-Key': key });
    assert.equal(waiting.status, 409);
    assert.equal(waiting.body.error.code, 'idempotency_request_in_progress');
    await expireIdempotencyLocks(stack.db.orm);
    const retry = await http.post('/calls', body, { 'Idempotency-Key': key });
    assert.equal(retry.status, 202, retry.text);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    assert.equal(retry.text, res.text, 'the same answer, byte for byte');
    const again = await http.post('/calls', body, { 'Idempotency-Key': key });
    assert.equal(again.text, res.text);
    assert.equal((await callsWithKey(key)).length, 1);
    await waitForCallEnd(http, res.body.id);
    assert.equal(await workflowRuns(stack.client, res.body.id), 1);
  });

  test('the call commits, the process dies before the workflow starts: the retry starts it, once', async () => {
    const { key, body, res } = await postLosingTheDatabaseAtStart({ startFails: true });
    assertApiError(res, 503, 'call_outcome_unknown');
    const [call] = await callsWithKey(key);
    assert.equal(call.status, 'queued', 'committed, never dialed');

    await expireIdempotencyLocks(stack.db.orm);
    const http = stack.api.client(owner.secret);
    const retry = await http.post('/calls', body, { 'Idempotency-Key': key });
    assert.equal(retry.status, 202, retry.text);
    assert.equal(retry.body.id, call.id);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    assert.equal((await http.post('/calls', body, { 'Idempotency-Key': key })).text, retry.text);
    assert.equal((await callsWithKey(key)).length, 1);
    const ended = await waitForCallEnd(http, call.id);
    assert.equal(ended.status, 'completed');
    assert.equal(await workflowRuns(stack.client, call.id), 1);
  });

  test('no retry ever comes: the sweep ends the never-dialed call not_connected, once; a later retry replays', async () => {
    const { key, body, res } = await postLosingTheDatabaseAtStart({ startFails: true });
    assertApiError(res, 503, 'call_outcome_unknown');
    const [call] = await callsWithKey(key);
    assert.equal(call.status, 'queued');
    const logger = createLogger('error', { write: () => {} });
    const em = () => stack.db.orm.em.fork();
    // Not yet: a queued call younger than STALE_QUEUED_SECONDS may still get its workflow.
    assert.deepEqual(await expireStaleQueuedCalls(em(), stack.client, stack.settings, logger), []);
    const later = new Date(Date.now() + (STALE_QUEUED_SECONDS + 1) * 1000);
    const expired = await expireStaleQueuedCalls(em(), stack.client, stack.settings, logger, later);
    assert.ok(expired.includes(call.id));
    const result = await stack.client.workflow.getHandle(callWorkflowId(call.id)).result();
    assert.deepEqual(result, { status: 'failed', endReason: 'not_connected', durationSeconds: null });
    const ended = await em().findOneOrFail(Call, { id: call.id });
    assert.equal(ended.status, 'failed');
    assert.equal(ended.endReason, 'not_connected');
    assert.equal(await em().count(Event, { call: call.id, type: 'call.failed' }), 1);
    assert.equal(await em().count(Event, { call: call.id, type: { $ne: 'call.failed' } }), 0);
    await assert.rejects(
      stack.client.workflow.getHandle(farEndWorkflowId(call.id)).describe(),
      WorkflowNotFoundError,
      'nobody was dialed',
    );
    // A second sweep, or a sweep of a call whose workflow runs, changes nothing.
    assert.ok(
      !(await expireStaleQueuedCalls(em(), stack.client, stack.settings, logger, later)).includes(call.id),
    );

    // The client comes back with its key after all: the stored answer, and still one call.
    await expireIdempotencyLocks(stack.db.orm);
    const retry = await stack.api.client(owner.secret).post('/calls', body, { 'Idempotency-Key': key });
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    assert.equal((await callsWithKey(key)).length, 1);
  });

  test('POST /agents and POST /webhooks: the database drops right after the commit; the retry replays, nothing is created twice', async () => {
    // Cut the database the moment the next transaction commits, before the answer is finalised.
    let armed = false;
    stack.db.orm.em.getEventManager().registerSubscriber({
      async afterTransactionCommit() {
        if (!armed) return;
        armed = false;
        await outage.begin();
      },
    });
    const http = stack.api.client(owner.secret);
    for (const [path, body, status] of [
      ['/agents', { name: 'Created once' }, 201],
      ['/webhooks', { url: 'https://example.com/hook', events: ['call.completed'] }, 201],
    ] as const) {
      const key = randomUUID();
      armed = true;
      const first = await http.post(path, body, { 'Idempotency-Key': key });
      await outage.end();
      assert.equal(armed, false, 'the outage happened');
      assert.equal(first.status, status, first.text);

      await expireIdempotencyLocks(stack.db.orm);
      const retry = await http.post(path, body, { 'Idempotency-Key': key });
      assert.equal(retry.status, status, retry.text);
      assert.equal(retry.headers.get('idempotent-replayed'), 'true');
      assert.equal(retry.body.id, first.body.id, `${path}: the first request's resource, not a second one`);
    }
  });
});
