import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ToolCall, type ToolCallStatus } from '../db/entities/index.js';
import {
  closeApiAndDatabase,
  createFixture,
  type Fixture,
  startApiOnFreshDatabase,
  type TestApi,
} from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { createAgentFixture, createQueuedCall, uniqueNumber } from './support/call-fixtures.js';
import type { TestDatabase } from './support/database.js';

// GET /calls/{call_id}/tool-calls (agent-tools spec section 4): the rows the call runtime writes,
// inserted here directly, read through the API oldest first in pages.

let db: TestDatabase;
let api: TestApi;
let owner: Fixture;
before(async () => {
  ({ db, api, owner } = await startApiOnFreshDatabase());
});
after(() => closeApiAndDatabase(api, db));

const toolCallId = () => `tc_${randomBytes(16).toString('hex')}`;

async function callWithToolCalls(
  workspaceId: string,
  rows: { status: ToolCallStatus; at: Date; attempts?: number; responseStatus?: number | null }[],
) {
  const fixture = await createAgentFixture(db.orm, { workspaceId });
  const call = await createQueuedCall(db.orm, fixture, { to: uniqueNumber('+4798') });
  const em = db.orm.em.fork();
  const ids: string[] = [];
  for (const [index, row] of rows.entries()) {
    const id = toolCallId();
    ids.push(id);
    em.create(ToolCall, {
      id,
      call: call.id,
      name: 'check_availability',
      arguments: { date: `2026-12-0${index + 1}` },
      status: row.status,
      attempts: row.attempts ?? 1,
      responseStatus: row.responseStatus === undefined ? 200 : row.responseStatus,
      result: row.status === 'succeeded' ? '{"slots":["09:00"]}' : null,
      durationMs: row.status === 'invalid_arguments' ? null : 120 + index,
      afterLineIndex: index,
      createdAt: row.at,
    });
  }
  await em.flush();
  return { callId: call.id, ids };
}

describe('GET /calls/{call_id}/tool-calls', () => {
  test('lists the call’s tool calls oldest first, every field of the ToolCall', async () => {
    const t = Date.parse('2026-11-27T10:00:00.000Z');
    const { callId, ids } = await callWithToolCalls(owner.workspaceId, [
      { status: 'failed', at: new Date(t + 2000), attempts: 3, responseStatus: 503 },
      { status: 'succeeded', at: new Date(t) },
      { status: 'invalid_arguments', at: new Date(t + 1000), attempts: 0, responseStatus: null },
    ]);
    const res = await api.client(owner.secret).get(`/calls/${callId}/tool-calls`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.object, 'list');
    assert.equal(res.body.has_more, false);
    assert.equal(res.body.next_cursor, null);
    assert.deepEqual(
      res.body.data.map((c: { id: string }) => c.id),
      [ids[1], ids[2], ids[0]],
    );
    assert.deepEqual(res.body.data[0], {
      object: 'tool_call',
      id: ids[1],
      call_id: callId,
      name: 'check_availability',
      arguments: { date: '2026-12-02' },
      status: 'succeeded',
      attempts: 1,
      response_status: 200,
      result: '{"slots":["09:00"]}',
      duration_ms: 121,
      created_at: '2026-11-27T10:00:00.000Z',
    });
    assert.deepEqual(
      { status: res.body.data[1].status, attempts: res.body.data[1].attempts },
      { status: 'invalid_arguments', attempts: 0 },
    );
    assert.equal(res.body.data[1].response_status, null);
    assert.equal(res.body.data[1].duration_ms, null);
    assert.equal(res.body.data[2].response_status, 503);
  });

  test('pages with limit and cursor, ties on created_at broken by id, nothing skipped or repeated', async () => {
    const at = new Date('2026-11-27T11:00:00.000Z');
    const rows = Array.from({ length: 5 }, (_, i) => ({
      status: 'succeeded' as const,
      at: i < 3 ? at : new Date(at.getTime() + i),
    }));
    const { callId, ids } = await callWithToolCalls(owner.workspaceId, rows);
    const expected = [...ids.slice(0, 3).sort(), ...ids.slice(3)];
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2';
      const page = await api.client(owner.secret).get(`/calls/${callId}/tool-calls${query}`);
      assert.equal(page.status, 200, page.text);
      assert.ok(page.body.data.length <= 2);
      seen.push(...page.body.data.map((c: { id: string }) => c.id));
      cursor = page.body.next_cursor;
      assert.equal(page.body.has_more, cursor !== null);
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual(seen, expected);
  });

  test('a call without tool calls is an empty list', async () => {
    const { callId } = await callWithToolCalls(owner.workspaceId, []);
    const res = await api.client(owner.secret).get(`/calls/${callId}/tool-calls`);
    assert.deepEqual(res.body, { object: 'list', data: [], has_more: false, next_cursor: null });
  });

  test('401 without a key, 403 without calls:read, 404 for another workspace’s or an unknown call, 400 for a bad limit', async () => {
    const { callId } = await callWithToolCalls(owner.workspaceId, [{ status: 'succeeded', at: new Date() }]);
    assertApiError(await api.client().get(`/calls/${callId}/tool-calls`), 401, 'api_key_missing');
    const agentsOnly = await createFixture(db.orm, {
      workspaceId: owner.workspaceId,
      scopes: ['agents:read'],
    });
    assertApiError(
      await api.client(agentsOnly.secret).get(`/calls/${callId}/tool-calls`),
      403,
      'missing_scope',
    );
    const viewer = await createFixture(db.orm, { workspaceId: owner.workspaceId, role: 'viewer' });
    assert.equal((await api.client(viewer.secret).get(`/calls/${callId}/tool-calls`)).status, 200);
    const stranger = await createFixture(db.orm);
    assertApiError(
      await api.client(stranger.secret).get(`/calls/${callId}/tool-calls`),
      404,
      'resource_missing',
      'call_id',
    );
    assertApiError(
      await api.client(owner.secret).get(`/calls/${crypto.randomUUID()}/tool-calls`),
      404,
      'resource_missing',
      'call_id',
    );
    assertApiError(
      await api.client(owner.secret).get(`/calls/${callId}/tool-calls?limit=0`),
      400,
      'parameter_invalid',
      'limit',
    );
    assertApiError(
      await api.client(owner.secret).get(`/calls/${callId}/tool-calls?cursor=x`),
      400,
      'parameter_invalid',
      'cursor',
    );
    assertApiError(
      await api.client(owner.secret).get(`/calls/${callId}/tool-calls?status=failed`),
      400,
      'parameter_unknown',
      'status',
    );
  });
});
