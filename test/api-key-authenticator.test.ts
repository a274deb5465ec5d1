import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ApiKeyAuthenticator, CACHE_TTL_MS } from '../api/auth/api-key-authenticator.js';
import { ApiError } from '../api/http/errors.js';
import { revokeApiKey, setUserRole } from '../lib/accounts.js';
import { createFixture } from './support/api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

// The key cache against the real key store, with a clock the test moves.

let db: TestDatabase;
before(async () => {
  db = await freshDatabase();
});
after(async () => {
  await db?.close();
});

const refusal = async (pending: Promise<unknown>) => {
  try {
    await pending;
  } catch (error) {
    assert.ok(error instanceof ApiError);
    return error.code;
  }
  return 'accepted';
};

test('revocation takes effect within the cache TTL, itself under 60 s', async () => {
  assert.ok(CACHE_TTL_MS <= 60_000);
  let now = Date.now();
  const auth = new ApiKeyAuthenticator(db.orm, () => now);
  const f = await createFixture(db.orm);
  const header = `Bearer ${f.secret}`;
  assert.equal((await auth.authenticate(header)).keyId, f.keyId);
  await revokeApiKey(db.orm.em.fork(), { keyId: f.keyId });
  now += CACHE_TTL_MS - 1;
  assert.equal(await refusal(auth.authenticate(header)), 'accepted', 'still cached');
  now += 1;
  assert.equal(await refusal(auth.authenticate(header)), 'api_key_invalid');
});

test('the key acts with its creator’s current role, refreshed with the cache', async () => {
  let now = Date.now();
  const auth = new ApiKeyAuthenticator(db.orm, () => now);
  const f = await createFixture(db.orm, { role: 'admin' });
  assert.equal((await auth.authenticate(`Bearer ${f.secret}`)).role, 'admin');
  await setUserRole(db.orm.em.fork(), { userId: f.userId, role: 'viewer' });
  now += CACHE_TTL_MS;
  assert.equal((await auth.authenticate(`Bearer ${f.secret}`)).role, 'viewer');
});

test('expiry is exact even while cached', async () => {
  let now = Date.now();
  const auth = new ApiKeyAuthenticator(db.orm, () => now);
  const f = await createFixture(db.orm, { expiresAt: new Date(now + 5_000) });
  assert.equal(await refusal(auth.authenticate(`Bearer ${f.secret}`)), 'accepted');
  now += 5_000;
  assert.equal(await refusal(auth.authenticate(`Bearer ${f.secret}`)), 'api_key_invalid');
});

test('header forms', async () => {
  const auth = new ApiKeyAuthenticator(db.orm);
  const f = await createFixture(db.orm);
  assert.equal(await refusal(auth.authenticate(undefined)), 'api_key_missing');
  assert.equal(await refusal(auth.authenticate('Bearer')), 'api_key_missing');
  assert.equal(await refusal(auth.authenticate(`Token ${f.secret}`)), 'api_key_missing');
  assert.equal(await refusal(auth.authenticate(`bearer ${f.secret}`)), 'accepted');
  assert.equal(await refusal(auth.authenticate(`Bearer ${f.secret}x`)), 'api_key_invalid');
  assert.equal(await refusal(auth.authenticate('Bearer   ')), 'api_key_missing');
  assert.equal(await refusal(auth.authenticate(`Bearer${f.secret}`)), 'api_key_missing');
  assert.equal(await refusal(auth.authenticate(`BEARER \t ${f.secret} `)), 'accepted');
  assert.equal(await refusal(auth.authenticate(`Bearer ${f.secret} extra`)), 'api_key_invalid');
});
