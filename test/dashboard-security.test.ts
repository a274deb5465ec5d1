import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_STREAMS_PER_SESSION } from '../api/dashboard/call-events.js';
import { ATTEMPTS_PER_ADDRESS } from '../api/dashboard/sign-in-limiter.js';
import { createUser, removeUser } from '../lib/accounts.js';
import { acceptInvite } from '../lib/dashboard/invites.js';
import { hashPassword } from '../lib/dashboard/passwords.js';
import {
  closeApiAndDatabase,
  createFixture,
  type Fixture,
  startApiOnFreshDatabase,
  type TestApi,
} from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { createAgentFixture, createQueuedCall, uniqueNumber } from './support/call-fixtures.js';
import { DashboardClient, inviteToken, TEST_PASSWORD } from './support/dashboard-session.js';
import type { TestDatabase } from './support/database.js';
import { orAfter } from './support/wait-for.js';

// Holes an outside probe found in the dashboard's sessions (issue 18): a password reset and a
// removal end the person's other sessions, invites are looked up before any argon2 work and
// limited per address, a live call stream ends with its session and is capped per session, and
// answers carrying a secret or a CSRF token are never cached.

let db: TestDatabase;
let api: TestApi;
let owner: Fixture;
before(async () => {
  ({ db, api, owner } = await startApiOnFreshDatabase());
});
after(() => closeApiAndDatabase(api, db));

/**
 * A person of a new workspace, signed in with a password. The password is set through the invite
 * function, not its endpoint, so the invite limit that a test below uses up stays this file's own.
 */
async function newPerson() {
  const fixture = await createFixture(db.orm);
  const token = await inviteToken(db.orm, fixture.userId);
  const accepted = await acceptInvite(db.orm.em.fork(), { token, password: TEST_PASSWORD });
  assert.ok(accepted.ok);
  const client = new DashboardClient(api.url);
  const res = await client.post('/dashboard/auth/sign-in', {
    email: accepted.user.email,
    password: TEST_PASSWORD,
  });
  assert.equal(res.status, 200, res.text);
  await client.refresh();
  return { fixture, client };
}

async function isSignedIn(client: DashboardClient): Promise<boolean> {
  const res = await client.get('/dashboard/auth/session');
  if (res.status === 401) assertApiError(res, 401, 'session_missing');
  return res.status === 200;
}

describe('sessions end when the password is set or the person is removed', () => {
  test('a password set through a new invite ends every other session of that person', async () => {
    const { fixture, client: stolen } = await newPerson();
    const email = (await stolen.get('/dashboard/auth/session')).body.email as string;
    const elsewhere = new DashboardClient(api.url);
    assert.equal(
      (await elsewhere.post('/dashboard/auth/sign-in', { email, password: TEST_PASSWORD })).status,
      200,
    );
    assert.ok(await isSignedIn(stolen));
    assert.ok(await isSignedIn(elsewhere));

    const reset = new DashboardClient(api.url);
    const res = await reset.post('/dashboard/auth/invite', {
      token: await inviteToken(db.orm, fixture.userId),
      password: 'a brand new password',
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(await isSignedIn(reset), true, 'the session the reset created holds');
    assert.equal(await isSignedIn(stolen), false, 'a stolen session does not survive the reset');
    assert.equal(await isSignedIn(elsewhere), false);
    // Its /v1 requests stop too: the session no longer stands in for a key.
    assertApiError(await stolen.get('/v1/agents'), 401, 'session_missing');
  });

  test('removing a person from a workspace ends their sessions and revokes their keys', async () => {
    const { fixture, client } = await newPerson();
    const email = (await client.get('/dashboard/auth/session')).body.email as string;
    // The same person in a second workspace keeps the membership, but signs in again.
    const other = await createFixture(db.orm);
    const second = await createUser(db.orm.em.fork(), {
      workspaceId: other.workspaceId,
      email,
      role: 'member',
    });
    assert.ok(await isSignedIn(client));
    const key = await createFixture(db.orm, { workspaceId: fixture.workspaceId });
    assert.equal((await api.client(key.secret).get('/me')).status, 200);

    await removeUser(db.orm.em.fork(), { userId: fixture.userId });
    assert.equal(await isSignedIn(client), false);
    assertApiError(await api.client(fixture.secret).get('/me'), 401, 'api_key_invalid');
    assert.equal((await api.client(key.secret).get('/me')).status, 200, "others' keys stay");
    const again = new DashboardClient(api.url);
    const signIn = await again.post('/dashboard/auth/sign-in', { email, password: TEST_PASSWORD });
    assert.equal(signIn.status, 200, signIn.text);
    assert.equal((await again.refresh()).body.member.user_id, second.id);
  });
});

describe('invites', () => {
  test('a wrong or used token is refused before any password hash is made', async () => {
    let hashes = 0;
    const countingHash = (password: string) => {
      hashes++;
      return hashPassword(password);
    };
    const em = () => db.orm.em.fork();
    const wrong = await acceptInvite(em(), { token: 'x'.repeat(43), password: TEST_PASSWORD }, countingHash);
    assert.equal(wrong.ok, false);
    assert.equal(hashes, 0, 'no argon2 work for a token that does not exist');

    const token = await inviteToken(db.orm, owner.userId);
    assert.equal((await acceptInvite(em(), { token, password: TEST_PASSWORD }, countingHash)).ok, true);
    assert.equal(hashes, 1);
    assert.equal((await acceptInvite(em(), { token, password: TEST_PASSWORD }, countingHash)).ok, false);
    assert.equal(hashes, 1, 'no argon2 work for a used token');
  });

  test('invite attempts are limited per address, with Retry-After', async () => {
    const client = new DashboardClient(api.url);
    // Each address has its own bucket; this test's requests come from 127.0.0.1 like the others,
    // so the limit is reached counting whatever this file's earlier invites used.
    let refused: Awaited<ReturnType<DashboardClient['post']>> | undefined;
    for (let i = 0; i <= ATTEMPTS_PER_ADDRESS + 5 && !refused; i++) {
      const res = await client.post('/dashboard/auth/invite', {
        token: `guess-${i}`,
        password: TEST_PASSWORD,
      });
      if (res.status === 429) refused = res;
      else assertApiError(res, 422, 'invite_invalid', 'token');
    }
    assert.ok(refused, 'no 429 after the limit');
    assertApiError(refused, 429, 'rate_limited');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    // Sign-in has its own bucket: the invite guesses did not use it up.
    const signIn = await new DashboardClient(api.url).post('/dashboard/auth/sign-in', {
      email: 'nobody@example.test',
      password: TEST_PASSWORD,
    });
    assertApiError(signIn, 401, 'sign_in_failed', 'password');
  });
});

/** A live stream's events as they arrive, and whether the server ended it. */
function openLive(client: DashboardClient, callId: string) {
  const events: string[] = [];
  const controller = new AbortController();
  const opened = fetch(`${api.url}/dashboard/api/calls/${callId}/live`, {
    headers: { cookie: client.cookie! },
    signal: controller.signal,
  });
  const ended = opened.then(async (response) => {
    if (response.status !== 200) return { status: response.status, ended: false };
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body!) {
        for (const line of decoder.decode(chunk).split('\n')) {
          if (line.startsWith('event: ')) events.push(line.slice(7));
        }
      }
      return { status: 200, ended: true };
    } catch {
      return { status: 200, ended: false };
    }
  });
  return { opened, ended, events, close: () => controller.abort() };
}

describe('the live call stream', () => {
  test('ends with its session: a sign-out stops it within a few seconds', async () => {
    const { fixture, client } = await newPerson();
    const agent = await createAgentFixture(db.orm, { workspaceId: fixture.workspaceId });
    const call = await createQueuedCall(db.orm, agent, { to: uniqueNumber('+4791') });
    const live = openLive(client, call.id);
    assert.equal((await live.opened).status, 200);
    await client.post('/dashboard/auth/sign-out');
    const outcome = await orAfter(live.ended, 10_000, 'still open' as const);
    live.close();
    assert.notEqual(outcome, 'still open', 'the stream kept sending after sign-out');
    assert.deepEqual(live.events.slice(-1), ['end']);
  });

  test(`a session holds at most ${MAX_STREAMS_PER_SESSION} open streams; closing one frees a place`, async () => {
    const { fixture, client } = await newPerson();
    const agent = await createAgentFixture(db.orm, { workspaceId: fixture.workspaceId });
    const call = await createQueuedCall(db.orm, agent, { to: uniqueNumber('+4792') });
    const streams = [];
    for (let i = 0; i < MAX_STREAMS_PER_SESSION; i++) {
      const live = openLive(client, call.id);
      assert.equal((await live.opened).status, 200);
      streams.push(live);
    }
    const refused = await client.get(`/dashboard/api/calls/${call.id}/live`);
    assertApiError(refused, 429, 'rate_limited');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);

    streams.pop()!.close();
    let reopened = 0;
    for (let attempt = 0; attempt < 20 && reopened !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const live = openLive(client, call.id);
      reopened = (await live.opened).status;
      if (reopened === 200) streams.push(live);
    }
    assert.equal(reopened, 200, 'a closed stream gave its place back');
    for (const live of streams) live.close();
  });
});

describe('answers that carry a secret or a CSRF token are never cached', () => {
  test('webhook create and rotate, key create, the session answer: Cache-Control no-store', async () => {
    const { client } = await newPerson();
    const session = await client.get('/dashboard/auth/session');
    assert.equal(session.headers.get('cache-control'), 'no-store');
    const webhook = await client.post('/v1/webhooks', {
      url: 'https://example.com/hook',
      events: ['call.started'],
    });
    assert.equal(webhook.status, 201, webhook.text);
    assert.equal(webhook.headers.get('cache-control'), 'no-store');
    const rotated = await client.post(`/v1/webhooks/${webhook.body.id}/rotate-secret`);
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal(rotated.headers.get('cache-control'), 'no-store');
    const key = await client.post('/dashboard/api/keys', { name: 'ci', scopes: ['agents:read'] });
    assert.equal(key.status, 201, key.text);
    assert.equal(key.headers.get('cache-control'), 'no-store');
    const refused = await api.client('svc_live_nope').get('/me');
    assert.equal(refused.headers.get('cache-control'), 'no-store', 'errors too');
    const document = await fetch(`${api.url}/v1/openapi.json`);
    assert.equal(document.headers.get('cache-control'), null, 'the document may be cached');
  });
});
