import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setLimits } from '../lib/accounts.js';
import { type ApiResponse, createFixture, startApi, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

let db: TestDatabase;
let apiA: TestApi;
let apiB: TestApi;
/**
 * The limiter's clock, shared by every API process here. It moves only when a test moves it, so
 * a run of requests shares one one-second window however slowly the machine answers them.
 */
let clockMs = Date.UTC(2026, 0, 1);
const clock = () => clockMs;
before(async () => {
  db = await freshDatabase();
  apiA = await startApi({ orm: db.orm, rateLimitClock: clock });
  apiB = await startApi({ orm: db.orm, rateLimitClock: clock });
});
after(async () => {
  await apiA?.close();
  await apiB?.close();
  await db?.close();
});

/** Moves the limiter's clock to the start of the next one-second window. */
function nextSecond() {
  clockMs = (Math.floor(clockMs / 1000) + 1) * 1000;
}

test('a key gets requestsPerSecond requests per second, then 429 rate_limited with Retry-After', async () => {
  const f = await createFixture(db.orm, { requestsPerSecond: 5 });
  const c = apiA.client(f.secret);
  nextSecond();
  const statuses: number[] = [];
  let refused: ApiResponse | undefined;
  for (let i = 0; i < 8; i++) {
    const res = await c.get('/me');
    statuses.push(res.status);
    if (res.status === 429) refused = res;
  }
  assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429]);
  assertApiError(refused!, 429, 'rate_limited');
  assert.equal(refused!.body.error.type, 'rate_limit_error');
  assert.equal(refused!.headers.get('retry-after'), '1');
  nextSecond();
  assert.equal((await c.get('/me')).status, 200);
});

test('the limit is shared by API processes', async () => {
  const f = await createFixture(db.orm, { requestsPerSecond: 10 });
  nextSecond();
  for (let i = 0; i < 6; i++) assert.equal((await apiA.client(f.secret).get('/me')).status, 200);
  await new Promise((r) => setTimeout(r, 100)); // A's batched counts reach the database
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await apiB.client(f.secret).get('/me')).status);
  assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
  assert.deepEqual(
    [...apiA.logs, ...apiB.logs].filter((line) => line.level !== 'info'),
    [],
  );
});

test('each key has its own budget', async () => {
  const f = await createFixture(db.orm, { requestsPerSecond: 2 });
  const g = await createFixture(db.orm, { workspaceId: f.workspaceId });
  nextSecond();
  for (let i = 0; i < 2; i++) assert.equal((await apiA.client(f.secret).get('/me')).status, 200);
  assert.equal((await apiA.client(f.secret).get('/me')).status, 429);
  assert.equal((await apiA.client(g.secret).get('/me')).status, 200);
});

test('the operator sets the limit per workspace (admin limits set)', async () => {
  const f = await createFixture(db.orm);
  await setLimits(db.orm.em.fork(), { workspaceId: f.workspaceId, requestsPerSecond: 3 });
  // A process that has not cached the key sees the new limit at once (others within 30 s).
  const fresh = await startApi({ orm: db.orm, rateLimitClock: clock });
  try {
    nextSecond();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await fresh.client(f.secret).get('/me')).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
  } finally {
    await fresh.close();
  }
});

test('refusals before authentication do not count; 401s are not rate limited per key', async () => {
  for (let i = 0; i < 20; i++)
    assertApiError(await apiA.client('svc_live_unknown').get('/me'), 401, 'api_key_invalid');
});
