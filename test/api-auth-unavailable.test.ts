import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { createFixture, startApi, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

// The key store goes away under a running API: the database stops accepting connections and the
// open ones are cut.

let db: TestDatabase;
let api: TestApi;
let admin: pg.Client;
const dbName = () => new URL(db.url).pathname.slice(1);

before(async () => {
  db = await freshDatabase();
  api = await startApi({ orm: db.orm });
  const serverUrl = new URL(db.url);
  serverUrl.pathname = '/postgres';
  admin = new pg.Client({ connectionString: serverUrl.toString() });
  await admin.connect();
});
after(async () => {
  await admin.query(`alter database "${dbName()}" allow_connections true`).catch(() => {});
  await admin.end();
  await api?.close();
  await db?.close();
});

test('an unreadable key store is 503 auth_unavailable; a cached key still works and GET /me shows workspace_name null', async () => {
  const cached = await createFixture(db.orm, { workspaceName: 'Cached' });
  const uncached = await createFixture(db.orm);
  assert.equal((await api.client(cached.secret).get('/me')).body.workspace_name, 'Cached');

  await admin.query(`alter database "${dbName()}" allow_connections false`);
  await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [dbName()]);

  const res = await api.client(uncached.secret).get('/me');
  assertApiError(res, 503, 'auth_unavailable');
  assert.equal(res.body.error.type, 'api_error');

  const me = await api.client(cached.secret).get('/me');
  assert.equal(me.status, 200);
  assert.equal(me.body.workspace_name, null);
  assert.equal(me.body.id, cached.keyId);

  await admin.query(`alter database "${dbName()}" allow_connections true`);
  const back = await api.client(uncached.secret).get('/me');
  assert.equal(back.status, 200);
});
