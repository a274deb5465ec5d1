import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createFixture, startApi, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { type DatabaseOutage, databaseOutage } from './support/database-outage.js';

// The key store goes away under a running API: the database stops accepting connections and the
// open ones are cut.

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
