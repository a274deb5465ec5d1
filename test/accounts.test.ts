import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ApiKey } from '../db/entities/index.js';
import { createApiKey, createUser, createWorkspace } from '../lib/accounts.js';
import { hashApiKeySecret } from '../lib/api-key-secret.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

let db: TestDatabase;
before(async () => {
  db = await freshDatabase();
});
after(async () => {
  await db.close();
});

test('an API key is stored as a hash only', async () => {
  const em = db.orm.em.fork();
  const ws = await createWorkspace(em, { name: 'Acme' });
  const user = await createUser(em, { workspaceId: ws.id, email: 'o@acme.test', role: 'owner' });
  const { key, secret } = await createApiKey(em, {
    workspaceId: ws.id,
    userId: user.id,
    name: 'k',
    scopes: ['calls:write'],
  });
  assert.match(secret, /^svc_live_[A-Za-z0-9_-]{43}$/);
  const stored = await db.orm.em.fork().findOneOrFail(ApiKey, { id: key.id });
  assert.equal(stored.secretHash, hashApiKeySecret(secret));
  assert.deepEqual(stored.scopes, ['calls:write']);
});
