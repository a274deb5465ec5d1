import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { revokeApiKey, setUserRole } from '../lib/accounts.js';
import { closeApiAndDatabase, createFixture, startApi, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

let db: TestDatabase;
let api: TestApi;
before(async () => {
  db = await freshDatabase();
  api = await startApi({ orm: db.orm });
});
after(() => closeApiAndDatabase(api, db));

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
    assertApiError(await api.client().get('/me'), 401, 'api_key_missing');
    const basic = await api.client().get('/me', { authorization: 'Basic dXNlcjpwYXNz' });
    assertApiError(basic, 401, 'api_key_missing');
  });

  test('a key in the query string or a cookie is not accepted', async () => {
    const f = await createFixture(db.orm);
    assertApiError(await api.client().get(`/me?api_key=${f.secret}`), 401, 'api_key_missing');
    assertApiError(await api.client().get('/me', { cookie: `api_key=${f.secret}` }), 401, 'api_key_missing');
    assertApiError(await api.client().get('/me', { 'x-api-key': f.secret }), 401, 'api_key_missing');
    // With a valid Bearer key as well, api_key is an unknown query parameter like any other.
    assertApiError(
      await api.client(f.secret).get(`/me?api_key=${f.secret}`),
      400,
      'parameter_unknown',
      'api_key',
    );
    assertApiError(
      await api.client(f.secret).get(`/agents?api_key=${f.secret}`),
      400,
      'parameter_unknown',
      'api_key',
    );
  });

  test('Authorization header forms over HTTP', async () => {
    const f = await createFixture(db.orm);
    const me = (authorization: string) => api.client().get('/me', { authorization });
    for (const accepted of [`Bearer ${f.secret}`, `bearer ${f.secret}`, `BEARER    ${f.secret}   `]) {
      assert.equal((await me(accepted)).body.id, f.keyId, accepted);
    }
    // No Bearer credentials at all: missing.
    for (const missing of ['Bearer', 'Bearer    ', 'Basic dXNlcjpwYXNz', `Token ${f.secret}`, f.secret]) {
      assertApiError(await me(missing), 401, 'api_key_missing');
    }
    // Bearer credentials that are not a valid key: invalid.
    for (const invalid of [
      `Bearer ${f.secret} ${f.secret}`,
      `Bearer ${f.secret.toUpperCase()}`,
      'Bearer x',
    ]) {
      assertApiError(await me(invalid), 401, 'api_key_invalid');
    }
  });

  test('a wrong key: 401 api_key_invalid', async () => {
    assertApiError(await api.client('svc_live_nope').get('/me'), 401, 'api_key_invalid');
    assertApiError(await api.client('something-else').get('/me'), 401, 'api_key_invalid');
  });
});

describe('keys', () => {
  test('an expired key is refused at once', async () => {
    const f = await createFixture(db.orm, { expiresAt: new Date(Date.now() + 1500) });
    assert.equal((await api.client(f.secret).get('/me')).status, 200);
    await new Promise((r) => setTimeout(r, 1600));
    assertApiError(await api.client(f.secret).get('/me'), 401, 'api_key_invalid');
  });

  test('a revoked key never seen before is refused at once', async () => {
    const f = await createFixture(db.orm);
    await revokeApiKey(db.orm.em.fork(), { keyId: f.keyId });
    assertApiError(await api.client(f.secret).get('/me'), 401, 'api_key_invalid');
  });

  test('a role change reaches a fresh app at once', async () => {
    const f = await createFixture(db.orm, { role: 'admin' });
    await setUserRole(db.orm.em.fork(), { userId: f.userId, role: 'viewer' });
    const res = await api.client(f.secret).post('/agents', { name: 'x' });
    assertApiError(res, 403, 'role_required');
  });
});
