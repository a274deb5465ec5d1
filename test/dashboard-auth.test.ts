import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ATTEMPTS_PER_ACCOUNT, ATTEMPTS_PER_ADDRESS } from '../api/dashboard/sign-in-limiter.js';
import { createUser, setUserRole } from '../lib/accounts.js';
import { acceptInvite } from '../lib/dashboard/invites.js';
import { loadSettings } from '../lib/settings.js';
import {
  closeApiAndDatabase,
  createFixture,
  type Fixture,
  startApi,
  startApiOnFreshDatabase,
  type TestApi,
} from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { DashboardClient, inviteToken, signedInClient, TEST_PASSWORD } from './support/dashboard-session.js';
import type { TestDatabase } from './support/database.js';

// Dashboard sign-in and sessions over real HTTP against real PostgreSQL: invites, argon2id
// passwords, the session cookie, CSRF, idle and absolute expiry, sign-out, the workspace picker,
// sign-in rate limits, and the session standing in for a key on /v1 with the person's role.

let db: TestDatabase;
let api: TestApi;
let owner: Fixture;
before(async () => {
  ({ db, api, owner } = await startApiOnFreshDatabase());
});
after(() => closeApiAndDatabase(api, db));

const sql = (text: string, params: unknown[]) => db.orm.em.getConnection().execute(text, params, 'run');

describe('invites', () => {
  test('an invite sets the password once, signs the person in, and the cookie is HttpOnly and SameSite=Lax', async () => {
    const token = await inviteToken(db.orm, owner.userId);
    const client = new DashboardClient(api.url);
    const res = await client.post('/dashboard/auth/invite', { token, password: TEST_PASSWORD });
    assert.equal(res.status, 200, res.text);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('va_session='))!;
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Lax/);
    assert.match(cookie, /; Path=\//);
    assert.doesNotMatch(cookie, /Secure/, 'plain http: no Secure flag');
    const session = await client.refresh();
    assert.equal(session.status, 200);
    assert.equal(session.body.member.workspace_id, owner.workspaceId);
    assert.equal(session.body.member.role, 'owner');
    assert.match(session.body.csrf_token, /^[\w-]{43}$/);

    const again = await new DashboardClient(api.url).post('/dashboard/auth/invite', {
      token,
      password: TEST_PASSWORD,
    });
    assertApiError(again, 422, 'invite_invalid', 'token');
    const stored = await db.orm.em
      .getConnection()
      .execute<{ password_hash: string }[]>('select password_hash from dashboard_credentials', [], 'all');
    assert.ok(
      stored.every((row) => row.password_hash.startsWith('$argon2id$')),
      'argon2id hashes only',
    );
  });

  test('served over HTTPS (DASHBOARD_URL https://…, TLS ending at a proxy) the cookie is also Secure', async () => {
    const behindProxy = await startApi({
      orm: db.orm,
      settings: { dashboardUrl: 'https://dashboard.example.com' },
    });
    try {
      const res = await new DashboardClient(behindProxy.url).post('/dashboard/auth/invite', {
        token: await inviteToken(db.orm, owner.userId),
        password: TEST_PASSWORD,
      });
      assert.equal(res.status, 200, res.text);
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith('va_session='))!;
      assert.match(cookie, /; HttpOnly; SameSite=Lax; .*; Secure$/);
    } finally {
      await behindProxy.close();
    }
  });

  test('an expired invite and a short password are refused', async () => {
    const token = await inviteToken(db.orm, owner.userId);
    const short = await new DashboardClient(api.url).post('/dashboard/auth/invite', {
      token,
      password: 'short',
    });
    assertApiError(short, 400, 'parameter_invalid', 'password');
    await sql(
      "update dashboard_invites set expires_at = now() - interval '1 second' where used_at is null",
      [],
    );
    const expired = await acceptInvite(db.orm.em.fork(), { token, password: TEST_PASSWORD });
    assert.equal(expired.ok, false);
  });
});

describe('sessions', () => {
  test('sign-in with the password; a wrong one is 401 sign_in_failed', async () => {
    const person = await createFixture(db.orm, { workspaceId: owner.workspaceId, role: 'admin' });
    await signedInClient(api.url, db.orm, person.userId);
    const email = await emailOf(person.userId);
    const wrong = await new DashboardClient(api.url).post('/dashboard/auth/sign-in', {
      email,
      password: 'nope nope nope',
    });
    assertApiError(wrong, 401, 'sign_in_failed', 'password');
    const client = new DashboardClient(api.url);
    const right = await client.post('/dashboard/auth/sign-in', {
      email: email.toUpperCase(),
      password: TEST_PASSWORD,
    });
    assert.equal(right.status, 200, right.text);
    assert.equal(right.body.workspace_selected, true);
    await client.refresh();
    assert.equal((await client.get('/v1/agents')).status, 200);
  });

  test('the session stands in for a key on /v1: reads, and writes with the CSRF token only', async () => {
    const client = await signedInClient(api.url, db.orm, owner.userId);
    const noToken = await client.post('/v1/agents', { name: 'From the dashboard' }, { csrf: false });
    assertApiError(noToken, 403, 'csrf_token_invalid', 'X-CSRF-Token');
    const badToken = await client.post(
      '/v1/agents',
      { name: 'From the dashboard' },
      { csrf: 'x'.repeat(43) },
    );
    assertApiError(badToken, 403, 'csrf_token_invalid', 'X-CSRF-Token');
    const created = await client.post('/v1/agents', { name: 'From the dashboard' });
    assert.equal(created.status, 201, created.text);
    const listed = await api.client(owner.secret).get(`/agents/${created.body.id}`);
    assert.equal(listed.status, 200, 'the agent is in the same workspace the key sees');
    assertApiError(await client.get('/v1/no-such-thing'), 404, 'route_not_found');
    assertApiError(await new DashboardClient(api.url).get('/v1/agents'), 401, 'api_key_missing');
  });

  test("a viewer's session reads but every write is 403 role_required, as for a viewer's key", async () => {
    const viewer = await createFixture(db.orm, { workspaceId: owner.workspaceId, role: 'viewer' });
    const client = await signedInClient(api.url, db.orm, viewer.userId);
    assert.equal((await client.get('/v1/agents')).status, 200);
    assertApiError(await client.post('/v1/agents', { name: 'forged' }), 403, 'role_required');
    assertApiError(
      await client.post('/v1/webhooks', { url: 'https://example.com/h', events: ['call.completed'] }),
      403,
      'role_required',
    );
    assertApiError(
      await client.post('/dashboard/api/keys', { name: 'k', scopes: ['calls:read'] }),
      403,
      'role_required',
    );
    assert.equal((await client.get('/dashboard/api/keys')).status, 200, 'everyone sees which keys exist');
  });

  test('a member cannot change webhooks, as a member key cannot', async () => {
    const member = await createFixture(db.orm, { workspaceId: owner.workspaceId, role: 'member' });
    const client = await signedInClient(api.url, db.orm, member.userId);
    assertApiError(
      await client.post('/v1/webhooks', { url: 'https://example.com/h', events: ['call.completed'] }),
      403,
      'role_required',
    );
    assert.equal((await client.post('/v1/agents', { name: 'member agent' })).status, 201);
  });

  test('a role change applies to the session at once', async () => {
    const person = await createFixture(db.orm, { workspaceId: owner.workspaceId, role: 'admin' });
    const client = await signedInClient(api.url, db.orm, person.userId);
    assert.equal((await client.post('/v1/agents', { name: 'before' })).status, 201);
    await setUserRole(db.orm.em.fork(), { userId: person.userId, role: 'viewer' });
    assertApiError(await client.post('/v1/agents', { name: 'after' }), 403, 'role_required');
  });

  test('idle and absolute expiry end the session: 401 session_missing and pages redirect to sign-in', async () => {
    const idle = await signedInClient(api.url, db.orm, owner.userId);
    const page = await idle.get('/agents');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /text\/html/);
    await sql(
      "update dashboard_sessions set last_seen_at = now() - interval '31 minutes' where ended_at is null",
      [],
    );
    assertApiError(await idle.get('/v1/agents'), 401, 'session_missing');
    const redirected = await idle.get('/agents');
    assert.equal(redirected.status, 302);
    assert.equal(redirected.headers.get('location'), '/sign-in?next=%2Fagents');

    const old = await signedInClient(api.url, db.orm, owner.userId);
    await sql(
      "update dashboard_sessions set expires_at = now() - interval '1 second' where ended_at is null",
      [],
    );
    assertApiError(await old.get('/v1/agents'), 401, 'session_missing');
  });

  test('sign-out ends the session everywhere and clears the cookie; it needs the CSRF token', async () => {
    const client = await signedInClient(api.url, db.orm, owner.userId);
    const cookie = client.cookie;
    assertApiError(
      await client.post('/dashboard/auth/sign-out', undefined, { csrf: false }),
      403,
      'csrf_token_invalid',
      'X-CSRF-Token',
    );
    const out = await client.post('/dashboard/auth/sign-out');
    assert.equal(out.status, 200);
    assert.equal(client.cookie, undefined, 'the cookie is cleared');
    client.cookie = cookie;
    assertApiError(await client.get('/v1/agents'), 401, 'session_missing');
  });

  test('no page, and no dashboard endpoint, without a session', async () => {
    const anonymous = new DashboardClient(api.url);
    for (const path of ['/', '/agents', '/calls', '/keys', '/webhooks', '/usage', '/numbers']) {
      const res = await anonymous.get(path);
      assert.equal(res.status, 302, path);
      assert.match(res.headers.get('location')!, /^\/sign-in/);
    }
    assert.equal((await anonymous.get('/sign-in')).status, 200);
    assertApiError(await anonymous.get('/dashboard/api/keys'), 401, 'session_missing');
    assertApiError(await anonymous.get('/dashboard/auth/session'), 401, 'session_missing');
    // A key does not open the dashboard's own endpoints.
    const withKey = await api.client(owner.secret).get(`${api.url}/dashboard/api/keys`);
    assertApiError(withKey, 401, 'session_missing');
    assertApiError(await anonymous.get('/no-such-page'), 404, 'route_not_found');
  });
});

describe('several workspaces', () => {
  test('a person with roles in two workspaces picks one; until then nothing of a workspace is reachable', async () => {
    const first = await createFixture(db.orm, { workspaceName: 'First' });
    const email = await emailOf(first.userId);
    const second = await createFixture(db.orm, { workspaceName: 'Second' });
    const secondMember = await createUser(db.orm.em.fork(), {
      workspaceId: second.workspaceId,
      email,
      role: 'viewer',
    });
    await signedInClient(api.url, db.orm, first.userId);

    const client = new DashboardClient(api.url);
    const res = await client.post('/dashboard/auth/sign-in', { email, password: TEST_PASSWORD });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.workspace_selected, false);
    const session = await client.refresh();
    assert.equal(session.body.member, null);
    assert.deepEqual(
      session.body.workspaces.map((w: { workspace_name: string }) => w.workspace_name).sort(),
      ['First', 'Second'],
    );
    assertApiError(await client.get('/v1/agents'), 403, 'workspace_not_selected', 'workspace_id');
    assert.equal((await client.get('/agents')).headers.get('location'), '/workspaces');

    assertApiError(
      await client.post('/dashboard/auth/workspace', { user_id: owner.userId }),
      400,
      'parameter_invalid',
      'user_id',
    );
    assert.equal((await client.post('/dashboard/auth/workspace', { user_id: secondMember.id })).status, 200);
    const picked = await client.refresh();
    assert.equal(picked.body.member.workspace_id, second.workspaceId);
    assert.equal(picked.body.member.role, 'viewer');
    assertApiError(await client.post('/v1/agents', { name: 'x' }), 403, 'role_required');
  });
});

describe('sign-in rate limits', () => {
  test('attempts per account are limited with the API’s 429 and Retry-After, right password or not', async () => {
    const person = await createFixture(db.orm, { workspaceId: owner.workspaceId });
    await signedInClient(api.url, db.orm, person.userId);
    const email = await emailOf(person.userId);
    const client = new DashboardClient(api.url);
    for (let i = 0; i < ATTEMPTS_PER_ACCOUNT; i++) {
      assertApiError(
        await client.post('/dashboard/auth/sign-in', { email, password: `wrong-${i}-password` }),
        401,
        'sign_in_failed',
        'password',
      );
    }
    const limited = await client.post('/dashboard/auth/sign-in', { email, password: TEST_PASSWORD });
    assertApiError(limited, 429, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    // Another account from the same address still gets through.
    const other = await createFixture(db.orm, { workspaceId: owner.workspaceId });
    await signedInClient(api.url, db.orm, other.userId);
    const ok = await client.post('/dashboard/auth/sign-in', {
      email: await emailOf(other.userId),
      password: TEST_PASSWORD,
    });
    assert.equal(ok.status, 200, ok.text);
  });
});

describe('sign-in rate limits per address', () => {
  test('one address trying many accounts is limited too', async () => {
    // A fresh window for this address: the attempts above came from the same loopback address.
    await sql('delete from sign_in_attempt_windows', []);
    const client = new DashboardClient(api.url);
    for (let i = 0; i < ATTEMPTS_PER_ADDRESS; i++) {
      const res = await client.post('/dashboard/auth/sign-in', {
        email: `nobody-${i}@example.test`,
        password: 'whatever it is',
      });
      assertApiError(res, 401, 'sign_in_failed', 'password');
    }
    const limited = await client.post('/dashboard/auth/sign-in', {
      email: 'someone-else@example.test',
      password: 'x',
    });
    assertApiError(limited, 429, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  });
});

describe('sign-in rate limits behind a reverse proxy (TRUST_PROXY)', () => {
  /** A failed sign-in to a different account each time, from `forwardedFor` as the proxy says. */
  let attempt = 0;
  const signIn = (target: TestApi, forwardedFor: string) =>
    new DashboardClient(target.url).request('POST', '/dashboard/auth/sign-in', {
      body: { email: `proxied-${attempt++}@example.test`, password: 'whatever it is' },
      headers: { 'x-forwarded-for': forwardedFor },
    });

  test('TRUST_PROXY is false (default), true (one proxy) or a number of proxies', () => {
    assert.equal(loadSettings({}).trustProxyHops, 0);
    assert.equal(loadSettings({ TRUST_PROXY: 'false' }).trustProxyHops, 0);
    assert.equal(loadSettings({ TRUST_PROXY: 'true' }).trustProxyHops, 1);
    assert.equal(loadSettings({ TRUST_PROXY: '2' }).trustProxyHops, 2);
    assert.throws(() => loadSettings({ TRUST_PROXY: 'yes please' }), /TRUST_PROXY must be/);
  });

  test('trusted (TRUST_PROXY=1): each address the proxy forwards has its own count, taken from the right of X-Forwarded-For', async () => {
    await sql('delete from sign_in_attempt_windows', []);
    const behindProxy = await startApi({ orm: db.orm, settings: { trustProxyHops: 1 } });
    try {
      for (let i = 0; i < ATTEMPTS_PER_ADDRESS; i++) {
        assertApiError(await signIn(behindProxy, '203.0.113.7'), 401, 'sign_in_failed', 'password');
      }
      assertApiError(await signIn(behindProxy, '203.0.113.7'), 429, 'rate_limited');
      // What a client writes in the header itself is left of what the proxy appended: not used.
      assertApiError(await signIn(behindProxy, '198.51.100.9, 203.0.113.7'), 429, 'rate_limited');
      // Everyone else behind the same proxy still signs in.
      assertApiError(await signIn(behindProxy, '198.51.100.9'), 401, 'sign_in_failed', 'password');
    } finally {
      await behindProxy.close();
    }
  });

  test('untrusted (the default): X-Forwarded-For is ignored, the connection’s address counts', async () => {
    await sql('delete from sign_in_attempt_windows', []);
    for (let i = 0; i < ATTEMPTS_PER_ADDRESS; i++) {
      assertApiError(await signIn(api, `203.0.113.${i}`), 401, 'sign_in_failed', 'password');
    }
    assertApiError(await signIn(api, '198.51.100.9'), 429, 'rate_limited');
  });
});

async function emailOf(userId: string): Promise<string> {
  const rows = await db.orm.em
    .getConnection()
    .execute<{ email: string }[]>('select email from users where id = ?', [userId], 'all');
  return rows[0]!.email;
}
