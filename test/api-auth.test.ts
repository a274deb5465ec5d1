import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { revokeApiKey, setUserRole } from '../lib/accounts.js';
import { createFixture, startApi, type TestApi } from './support/api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

let db: TestDatabase;
let api: TestApi;
before(async () => {
  db = await freshDatabase();
  api = await startApi({ orm: db.orm });
});
after(async () => {
  await api?.close();
  await db?.close();
});

function assertError(
  res: { status: number; headers: Headers; body: any },
  status: number,
  code: string,
  param: string | null = null,
) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.error.code, code);
  assert.equal(res.body.error.param, param);
  assert.equal(typeof res.body.error.message, 'string');
  assert.equal(res.body.request_id, res.headers.get('x-request-id'));
}

describe('GET /me', () => {
  test('answers ApiKeyInfo for the key', async () => {
    const f = await createFixture(db.orm, { workspaceName: 'Acme', scopes: ['calls:write', 'agents:read'] });
    const res = await api.client(f.secret).get('/me');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      object: 'api_key',
      id: f.keyId,
      workspace_id: f.workspaceId,
      workspace_name: 'Acme',
      scopes: ['calls:write', 'agents:read'],
    });
    assert.match(res.headers.get('x-request-id') ?? '', /^req_[0-9a-f]{32}$/);
  });

  test('no key: 401 api_key_missing', async () => {
    assertError(await api.client().get('/me'), 401, 'api_key_missing');
    const basic = await api.client().get('/me', { authorization: 'Basic dXNlcjpwYXNz' });
    assertError(basic, 401, 'api_key_missing');
  });

  test('a key in the query string or a cookie is not accepted', async () => {
    const f = await createFixture(db.orm);
    assertError(await api.client().get(`/me?api_key=${f.secret}`), 401, 'api_key_missing');
    assertError(await api.client().get('/me', { cookie: `api_key=${f.secret}` }), 401, 'api_key_missing');
  });

  test('a wrong key: 401 api_key_invalid', async () => {
    assertError(await api.client('svc_live_nope').get('/me'), 401, 'api_key_invalid');
    assertError(await api.client('something-else').get('/me'), 401, 'api_key_invalid');
  });
});

describe('keys', () => {
  test('an expired key is refused at once', async () => {
    const f = await createFixture(db.orm, { expiresAt: new Date(Date.now() + 1500) });
    assert.equal((await api.client(f.secret).get('/me')).status, 200);
    await new Promise((r) => setTimeout(r, 1600));
    assertError(await api.client(f.secret).get('/me'), 401, 'api_key_invalid');
  });

  test('a revoked key never seen before is refused at once', async () => {
    const f = await createFixture(db.orm);
    await revokeApiKey(db.orm.em.fork(), { keyId: f.keyId });
    assertError(await api.client(f.secret).get('/me'), 401, 'api_key_invalid');
  });

  test('a role change reaches a fresh app at once', async () => {
    const f = await createFixture(db.orm, { role: 'admin' });
    await setUserRole(db.orm.em.fork(), { userId: f.userId, role: 'viewer' });
    const res = await api.client(f.secret).post('/agents', { name: 'x' });
    assertError(res, 403, 'role_required');
  });
});
