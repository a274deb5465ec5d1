import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createFixture, startApi, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { signedInClient } from './support/dashboard-session.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { type DatabaseOutage, databaseOutage } from './support/database-outage.js';

// The key store goes away under a running API: the database stops accepting connections and the
// open ones are cut. A key store that fails any other way is a bug: 500, not a retryable 503.

let db: TestDatabase;
let api: TestApi;
let outage: DatabaseOutage;

before(async () => {
  db = await freshDatabase();
  api = await startApi({ orm: db.orm });
  outage = await databaseOutage(db);
});
after(async () => {
  await outage?.close();
  await api?.close();
  await db?.close();
});

test('an unreadable key store is 503 auth_unavailable; a cached key still works and GET /me shows workspace_name null', async () => {
  const cached = await createFixture(db.orm, { workspaceName: 'Cached' });
  const uncached = await createFixture(db.orm);
  assert.equal((await api.client(cached.secret).get('/me')).body.workspace_name, 'Cached');

  await outage.begin();

  const res = await api.client(uncached.secret).get('/me');
  assertApiError(res, 503, 'auth_unavailable');
  assert.equal(res.body.error.type, 'api_error');
  assert.equal(res.headers.get('retry-after'), '2');

  const me = await api.client(cached.secret).get('/me');
  assert.equal(me.status, 200);
  assert.equal(me.body.workspace_name, null);
  assert.equal(me.body.id, cached.keyId);

  await outage.end();
  const back = await api.client(uncached.secret).get('/me');
  assert.equal(back.status, 200);
});

test('a key or session lookup that fails for another reason than an unreachable database is a 500 with its stack in the log', async () => {
  const person = await createFixture(db.orm);
  const session = await signedInClient(api.url, db.orm, person.userId);
  const sql = (text: string) => db.orm.em.getConnection().execute(text, [], 'run');
  // A statement that is wrong (the table is gone: SQLSTATE 42P01), on a database that answers.
  await sql('alter table api_keys rename to api_keys_away');
  await sql('alter table dashboard_sessions rename to dashboard_sessions_away');
  try {
    for (const res of [await api.client(person.secret).get('/me'), await session.get('/v1/me')]) {
      assertApiError(res, 500, 'internal_error');
      assert.equal(res.headers.get('retry-after'), null);
      const logged = api.logs.find(
        (line) => line.request_id === res.body.request_id && line.level === 'error',
      );
      assert.ok(logged, `the failure of ${res.body.request_id} is logged`);
      const error = logged.error as { stack?: string };
      assert.match(error.stack ?? '', /api_keys|dashboard_sessions/);
      assert.match(error.stack ?? '', /\n\s+at /, 'with its stack');
    }
  } finally {
    await sql('alter table api_keys_away rename to api_keys');
    await sql('alter table dashboard_sessions_away rename to dashboard_sessions');
  }
});
