import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dashboardApiRoutes } from '../api/dashboard/dashboard.js';
import type { JsonSchema } from '../api/http/route.js';
import { withStorableText } from '../api/http/storable-text.js';
import { allRoutes } from '../api/routes/index.js';
import { closeApiAndDatabase, type Fixture, startApiOnFreshDatabase, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { createAgentFixture, uniqueNumber } from './support/call-fixtures.js';
import type { TestDatabase } from './support/database.js';

// The input-cost rule (docs/api-platform.md): what a client sends costs the server time linear in
// its size. Strings are bounded by a maxLength that is checked before any pattern or format
// (api/http/length-first.ts), and a value the database cannot store is a 400, not a 500.

let db: TestDatabase;
let api: TestApi;
let owner: Fixture;
before(async () => {
  ({ db, api, owner } = await startApiOnFreshDatabase());
});
after(() => closeApiAndDatabase(api, db));

const client = () => api.client(owner.secret);

/** `aa-aaaaa-baaaa-…`: distinct 5-letter variant subtags, the BCP 47 pattern's worst case. */
function slowLanguageTag(bytes: number): string {
  const parts = ['aa'];
  let length = 2;
  for (let i = 0; length < bytes; i++) {
    let subtag = '';
    for (let n = i, k = 0; k < 5; k++, n = Math.floor(n / 26)) subtag += String.fromCharCode(97 + (n % 26));
    parts.push(subtag);
    length += 6;
  }
  return parts.join('-').slice(0, bytes);
}

/** Every string schema of a request (params, query, body) as the router compiles it. */
function* requestStrings(node: unknown, path: string): Generator<[string, JsonSchema]> {
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) yield* requestStrings(item, `${path}/${index}`);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as JsonSchema;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const isString = types.includes('string') || 'pattern' in schema || 'format' in schema;
  if (isString && !('enum' in schema) && !('const' in schema)) yield [path, schema];
  for (const [key, value] of Object.entries(schema)) {
    if (['enum', 'const', 'default', 'examples', 'example'].includes(key)) continue;
    yield* requestStrings(value, `${path}/${key}`);
  }
}

describe('the input-cost rule', () => {
  test('every string a request can carry has a maxLength (so a pattern or format never sees more)', () => {
    const unbounded: string[] = [];
    for (const route of [...allRoutes, ...dashboardApiRoutes]) {
      for (const part of ['params', 'query', 'body'] as const) {
        const schema = route[part];
        if (!schema) continue;
        for (const [path, string] of requestStrings(withStorableText(schema), '')) {
          if (typeof string.maxLength !== 'number')
            unbounded.push(`${route.method} ${route.path} ${part}${path}`);
        }
      }
    }
    assert.deepEqual(unbounded, []);
  });

  test('a 1 MiB language is refused at once, and a request beside it is not held up', async () => {
    const language = slowLanguageTag(1024 * 1024 - 100);
    for (const send of [
      () => client().post('/agents', { name: 'Slow', language }),
      async () => {
        const agent = await client().post('/agents', { name: 'Patched' });
        return client().patch(`/agents/${agent.body.id}`, { language });
      },
    ]) {
      const started = performance.now();
      const [refused, me] = await Promise.all([
        send(),
        // Sent while the large body is read and checked; one event loop serves both.
        new Promise((resolve) => setTimeout(resolve, 20)).then(async () => {
          const sent = performance.now();
          const res = await client().get('/me');
          return { res, ms: performance.now() - sent };
        }),
      ]);
      assertApiError(refused, 400, 'parameter_invalid', 'language');
      assert.match(refused.body.error.message, /at most 20 characters/);
      assert.equal(me.res.status, 200);
      // Before the fix the 1 MiB tag held the event loop for minutes (96 KB: 2 s); now reading
      // and refusing it is milliseconds. The bounds leave room for a loaded CI machine.
      assert.ok(performance.now() - started < 2_000, `refusal took ${performance.now() - started} ms`);
      assert.ok(me.ms < 1_000, `GET /me waited ${me.ms} ms`);
    }
  });

  test('an overlong id, time or cursor is refused for its length', async () => {
    // 5,000 characters: long for any of them, short enough for the request line (16 KiB).
    const long = 'a'.repeat(5_000);
    assertApiError(await client().get(`/agents/${long}`), 400, 'parameter_invalid', 'agent_id');
    assertApiError(
      await client().get(`/calls?created_after=${long}`),
      400,
      'parameter_invalid',
      'created_after',
    );
    assertApiError(await client().get(`/calls?cursor=${long}`), 400, 'parameter_invalid', 'cursor');
  });
});

describe('date-times the database cannot store', () => {
  // RFC 3339 allows a leap second and the year 0000; JavaScript cannot represent the first and
  // PostgreSQL's driver mangled the second: both were 500s.
  const unstorable = ['2026-11-25T23:59:60Z', '0000-01-01T00:00:00Z', '0001-01-01T00:30:00+01:00'];

  test('GET /calls and GET /usage refuse them with 400 and the parameter', async () => {
    for (const value of unstorable) {
      const q = encodeURIComponent(value);
      assertApiError(
        await client().get(`/calls?created_after=${q}`),
        400,
        'parameter_invalid',
        'created_after',
      );
      assertApiError(
        await client().get(`/calls?created_before=${q}`),
        400,
        'parameter_invalid',
        'created_before',
      );
      assertApiError(await client().get(`/usage?start=${q}`), 400, 'parameter_invalid', 'start');
      assertApiError(await client().get(`/usage?end=${q}`), 400, 'parameter_invalid', 'end');
    }
  });

  test("a campaign's schedule.start_at is refused the same way, and nothing is created", async () => {
    // A published agent with a number: the same request with a storable start_at is accepted.
    const { agentId } = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId });
    const campaign = (start_at: string) =>
      client().post('/campaigns', {
        agent_id: agentId,
        name: 'Leap',
        recipients: [{ to: uniqueNumber('+4790') }],
        schedule: { start_at, timezone: 'Europe/Oslo' },
      });
    for (const value of unstorable) {
      assertApiError(await campaign(value), 400, 'parameter_invalid', 'schedule.start_at');
    }
    assert.equal((await client().get('/campaigns')).body.data.length, 0);
    const later = await campaign('2099-01-01T00:00:00Z');
    assert.equal(later.status, 201, later.text);
  });

  test('the edges that can be stored still pass', async () => {
    for (const value of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '2026-11-25T23:59:59+14:00']) {
      const res = await client().get(`/calls?created_after=${encodeURIComponent(value)}`);
      assert.equal(res.status, 200, `${value}: ${res.text}`);
    }
  });
});
