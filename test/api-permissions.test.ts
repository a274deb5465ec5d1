import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { defineRoute } from '../api/http/route.js';
import { allRoutes } from '../api/routes/index.js';
import { TestRun } from '../db/entities/index.js';
import { createPhoneNumber } from '../lib/accounts.js';
import { createTestRun } from '../lib/test-runs/create-test-run.js';
import {
  type ApiResponse,
  closeApiAndDatabase,
  createFixture,
  type Fixture,
  startApi,
  startApiOnFreshDatabase,
  type TestApi,
} from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import type { TestDatabase } from './support/database.js';

let db: TestDatabase;
let api: TestApi;
let owner: Fixture;
let agentId: string;
let numberId: string;
before(async () => {
  ({ db, api, owner } = await startApiOnFreshDatabase());
  agentId = (await api.client(owner.secret).post('/agents', { name: 'A', system_prompt: 's' })).body.id;
  numberId = (
    await createPhoneNumber(db.orm.em.fork(), { workspaceId: owner.workspaceId, number: '+4791111111' })
  ).id;
});
after(() => closeApiAndDatabase(api, db));

describe('scopes', () => {
  test('a missing scope is 403 missing_scope naming it', async () => {
    const f = await createFixture(db.orm, { workspaceId: owner.workspaceId, scopes: ['calls:read'] });
    const c = api.client(f.secret);
    const cases: [Promise<ApiResponse>, string][] = [
      [c.get('/agents'), 'agents:read'],
      [c.get(`/agents/${agentId}`), 'agents:read'],
      [c.post('/agents', { name: 'x' }), 'agents:write'],
      [c.patch(`/agents/${agentId}`, { name: 'x' }), 'agents:write'],
      [c.delete(`/agents/${agentId}`), 'agents:write'],
      [c.post(`/agents/${agentId}/publish`), 'agents:write'],
      [c.post(`/agents/${agentId}/unpublish`), 'agents:write'],
      [c.get('/phone-numbers'), 'numbers:read'],
      [c.get(`/phone-numbers/${numberId}`), 'numbers:read'],
      [c.patch(`/phone-numbers/${numberId}`, { agent_id: null }), 'numbers:write'],
    ];
    for (const [pending, scope] of cases) {
      const res = await pending;
      assertApiError(res, 403, 'missing_scope');
      assert.equal(res.body.error.type, 'permission_error');
      assert.match(res.body.error.message, new RegExp(scope));
    }
    assert.equal((await c.get('/me')).status, 200, 'GET /me needs no scope');
  });

  test('test runs: calls:write to create and cancel, calls:read to read; a refusal writes nothing', async () => {
    const { run } = await createTestRun(db.orm.em.fork(), {
      workspaceId: owner.workspaceId,
      agentId,
      scenarios: [{ name: 'S', callerPrompt: 'p', successCriteria: 'c', maxTurns: 12 }],
      runsPerScenario: 1,
    });
    const body = { scenarios: [{ name: 'S', caller_prompt: 'p', success_criteria: 'c' }] };
    const none = api.client(
      (
        await createFixture(db.orm, {
          workspaceId: owner.workspaceId,
          scopes: ['agents:write', 'numbers:write'],
        })
      ).secret,
    );
    const reader = api.client(
      (await createFixture(db.orm, { workspaceId: owner.workspaceId, scopes: ['calls:read'] })).secret,
    );
    const cases: [Promise<ApiResponse>, string][] = [
      [none.post(`/agents/${agentId}/test-runs`, body), 'calls:write'],
      [none.post(`/test-runs/${run.id}/cancel`), 'calls:write'],
      [none.get(`/agents/${agentId}/test-runs`), 'calls:read'],
      [none.get(`/test-runs/${run.id}`), 'calls:read'],
      [reader.post(`/agents/${agentId}/test-runs`, body), 'calls:write'],
      [reader.post(`/test-runs/${run.id}/cancel`), 'calls:write'],
    ];
    for (const [pending, scope] of cases) {
      const res = await pending;
      assertApiError(res, 403, 'missing_scope');
      assert.equal(res.body.error.type, 'permission_error');
      assert.match(res.body.error.message, new RegExp(scope));
    }
    // calls:read reads them.
    const listed = await reader.get(`/agents/${agentId}/test-runs`);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.body.data.map((r: { id: string }) => r.id),
      [run.id],
    );
    assert.equal((await reader.get(`/test-runs/${run.id}`)).body.status, 'queued');
    // Nothing was written: no second run, the run not canceled.
    const runs = await db.orm.em.fork().find(TestRun, { workspace: owner.workspaceId });
    assert.deepEqual(
      runs.map((r) => [r.id, r.status]),
      [[run.id, 'queued']],
    );
  });

  test('a write scope includes the matching read, and only that', async () => {
    const f = await createFixture(db.orm, { workspaceId: owner.workspaceId, scopes: ['agents:write'] });
    const c = api.client(f.secret);
    assert.equal((await c.get('/agents')).status, 200);
    assert.equal((await c.get(`/agents/${agentId}`)).status, 200);
    assertApiError(await c.get('/phone-numbers'), 403, 'missing_scope');
    const reader = await createFixture(db.orm, { workspaceId: owner.workspaceId, scopes: ['agents:read'] });
    assertApiError(await api.client(reader.secret).post('/agents', { name: 'x' }), 403, 'missing_scope');
  });

  test('permission is checked before the body is read or validated', async () => {
    const f = await createFixture(db.orm, { workspaceId: owner.workspaceId, scopes: ['agents:read'] });
    assertApiError(await api.client(f.secret).post('/agents', { bogus: 1 }), 403, 'missing_scope');
    assertApiError(await api.client().post('/agents', { bogus: 1 }), 401, 'api_key_missing');
  });
});

describe('roles', () => {
  test('a viewer’s key only reads, whatever its scopes: writes are 403 role_required', async () => {
    const f = await createFixture(db.orm, { workspaceId: owner.workspaceId, role: 'viewer' });
    const c = api.client(f.secret);
    assert.equal((await c.get('/agents')).status, 200);
    assert.equal((await c.get('/phone-numbers')).status, 200);
    for (const res of [
      await c.post('/agents', { name: 'x' }),
      await c.patch(`/agents/${agentId}`, { name: 'x' }),
      await c.post(`/agents/${agentId}/publish`),
      await c.delete(`/agents/${agentId}`),
      await c.patch(`/phone-numbers/${numberId}`, { agent_id: null }),
    ]) {
      assertApiError(res, 403, 'role_required');
      assert.match(res.body.error.message, /viewer/);
    }
  });

  test('members and admins write agents and numbers', async () => {
    for (const role of ['member', 'admin'] as const) {
      const c = api.client((await createFixture(db.orm, { workspaceId: owner.workspaceId, role })).secret);
      const created = await c.post('/agents', { name: role });
      assert.equal(created.status, 201);
      assert.equal((await c.patch(`/phone-numbers/${numberId}`, { agent_id: created.body.id })).status, 200);
    }
  });
});

describe('routes limited to owners and admins (webhook changes)', () => {
  test('owner and admin pass; member and viewer get 403 role_required, after the scope check', async () => {
    const local = await startApi({
      orm: db.orm,
      routes: [
        ...allRoutes,
        defineRoute({
          method: 'POST',
          path: '/test/owner-or-admin',
          operationId: 'ownerOrAdmin',
          summary: 'Needs an owner or admin key.',
          scope: 'webhooks:write',
          roles: ['owner', 'admin'],
          responses: { 200: { description: 'ok' } },
          async handler() {
            return { status: 200, body: { ok: true } };
          },
        }),
      ],
    });
    try {
      const as = async (options: Parameters<typeof createFixture>[1]) =>
        local
          .client((await createFixture(db.orm, { workspaceId: owner.workspaceId, ...options })).secret)
          .post('/test/owner-or-admin');
      assert.equal((await as({ role: 'owner' })).status, 200);
      assert.equal((await as({ role: 'admin' })).status, 200);
      for (const role of ['member', 'viewer'] as const) {
        const res = await as({ role });
        assertApiError(res, 403, 'role_required');
        assert.match(res.body.error.message, role === 'viewer' ? /viewer/ : /owner or admin/);
      }
      // Scope first: a member without the scope hears about the scope.
      assertApiError(await as({ role: 'member', scopes: ['webhooks:read'] }), 403, 'missing_scope');
    } finally {
      await local.close();
    }
  });
});

describe('workspaces are isolated', () => {
  test('another workspace’s ids behave as missing', async () => {
    const other = await createFixture(db.orm, { requestsPerSecond: 10_000 });
    const c = api.client(other.secret);
    assertApiError(await c.get(`/agents/${agentId}`), 404, 'resource_missing', 'agent_id');
    assertApiError(await c.patch(`/agents/${agentId}`, { name: 'x' }), 404, 'resource_missing', 'agent_id');
    assertApiError(await c.delete(`/agents/${agentId}`), 404, 'resource_missing', 'agent_id');
    assertApiError(await c.post(`/agents/${agentId}/publish`), 404, 'resource_missing', 'agent_id');
    assertApiError(await c.post(`/agents/${agentId}/unpublish`), 404, 'resource_missing', 'agent_id');
    assertApiError(await c.get(`/phone-numbers/${numberId}`), 404, 'resource_missing', 'phone_number_id');
    assertApiError(
      await c.patch(`/phone-numbers/${numberId}`, { agent_id: null }),
      404,
      'resource_missing',
      'phone_number_id',
    );
    assert.deepEqual((await c.get('/agents')).body.data, []);
    assert.deepEqual((await c.get('/phone-numbers')).body.data, []);

    // Their own number cannot be given our agent.
    const theirNumber = await createPhoneNumber(db.orm.em.fork(), {
      workspaceId: other.workspaceId,
      number: '+4792222222',
    });
    assertApiError(
      await c.patch(`/phone-numbers/${theirNumber.id}`, { agent_id: agentId }),
      404,
      'resource_missing',
      'agent_id',
    );
    assert.equal((await api.client(owner.secret).get(`/agents/${agentId}`)).status, 200);
  });
});
