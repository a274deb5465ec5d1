import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { closeApiAndDatabase, startApi, type TestApi } from './support/api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

// deps.temporal in the test API: connected on first use to the shared dev server, one client
// for every caller, closed with the API.

let db: TestDatabase;
let api: TestApi;
before(async () => {
  db = await freshDatabase();
  api = await startApi({ orm: db.orm });
});
after(() => closeApiAndDatabase(api, db));

test('deps.temporal connects once and reaches the server', async () => {
  const [a, b] = await Promise.all([api.deps.temporal(), api.deps.temporal()]);
  assert.equal(a, b);
  const info = await a.workflowService.getSystemInfo({});
  assert.ok(info.serverVersion);
});
