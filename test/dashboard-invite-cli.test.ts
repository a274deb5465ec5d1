import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DashboardInvite } from '../db/entities/index.js';
import { createUser, createWorkspace } from '../lib/accounts.js';
import { adminInProcess, adminProcess } from './support/admin-cli.js';
import { startApi, type TestApi } from './support/api.js';
import { DashboardClient } from './support/dashboard-session.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

// `admin user invite` (operations contract, section 8) on a real database; the link it prints then
// works once against the API. The first case runs the CLI as an operator does, a subprocess; the
// others call its entry point in this process (test/support/admin-cli.ts).

let db: TestDatabase;
let api: TestApi;
let userId: string;
before(async () => {
  db = await freshDatabase();
  api = await startApi({ orm: db.orm });
  const em = db.orm.em.fork();
  const workspace = await createWorkspace(em, { name: 'Invited' });
  userId = (await createUser(em, { workspaceId: workspace.id, email: 'ada@invited.test', role: 'admin' })).id;
});
after(async () => {
  await api?.close();
  await db?.close();
});

function cliEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, DATABASE_URL: db.url, PORT: '8123', ...env };
}

function admin(args: string[], env: NodeJS.ProcessEnv = {}) {
  return adminInProcess(args, cliEnv(env));
}

test('user invite --json prints {"url"}: a one-time link on the dashboard, valid 72 hours by default', async () => {
  const started = Date.now();
  const result = await adminProcess(['user', 'invite', '--id', userId, '--json'], { env: cliEnv() });
  assert.equal(result.code, 0, result.stderr);
  const printed = JSON.parse(result.stdout);
  assert.deepEqual(Object.keys(printed), ['url']);
  assert.match(printed.url, /^http:\/\/127\.0\.0\.1:8123\/invite#token=[\w-]{43}$/);
  const invite = await db.orm.em
    .fork()
    .findOneOrFail(DashboardInvite, { user: userId }, { orderBy: { createdAt: 'desc' } });
  const hours = (invite.expiresAt.getTime() - started) / 3_600_000;
  assert.ok(hours > 71.9 && hours <= 72.01, `expires in ${hours} h`);

  // The link works once, on the API that serves the dashboard.
  const token = new URLSearchParams(new URL(printed.url).hash.slice(1)).get('token');
  const first = await new DashboardClient(api.url).post('/dashboard/auth/invite', {
    token,
    password: 'a long enough password',
  });
  assert.equal(first.status, 200, first.text);
  const second = await new DashboardClient(api.url).post('/dashboard/auth/invite', {
    token,
    password: 'a long enough password',
  });
  assert.equal(second.status, 422);
});

test('user invite --expires-in-hours sets the validity; unknown users and bad hours are refused', async () => {
  const started = Date.now();
  const result = await admin(['user', 'invite', '--id', userId, '--expires-in-hours', '2', '--json'], {
    DASHBOARD_URL: 'https://dash.example.com/',
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(JSON.parse(result.stdout).url, /^https:\/\/dash\.example\.com\/invite#token=/);
  const invite = await db.orm.em
    .fork()
    .findOneOrFail(DashboardInvite, { user: userId }, { orderBy: { createdAt: 'desc' } });
  const hours = (invite.expiresAt.getTime() - started) / 3_600_000;
  assert.ok(hours > 1.9 && hours <= 2.01, `expires in ${hours} h`);

  const unknown = await admin(['user', 'invite', '--id', crypto.randomUUID()]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^error: no user with id/);
  const zero = await admin(['user', 'invite', '--id', userId, '--expires-in-hours', '0']);
  assert.equal(zero.code, 1);
  assert.match(zero.stderr, /expires-in-hours/);
});
