import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startLocalPostgres } from '../db/embedded-postgres.js';
import { ApiKey, PhoneNumber, User, Workspace } from '../db/entities/index.js';
import { createUser, createWorkspace } from '../lib/accounts.js';
import { hashApiKeySecret } from '../lib/api-key-secret.js';
import { SCOPES } from '../lib/scopes.js';
import { freePort } from '../scripts/processes.js';
import { adminInProcess, adminProcess, adminTs } from './support/admin-cli.js';
import { startApi } from './support/api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { type Run, runProcess } from './support/run-process.js';

// The operator CLI on a real database, judged by its stdout, stderr, exit code and the rows it
// leaves behind. Each command's rules run through the CLI's entry point in this process; what only
// a process shows (stdout holding exactly the JSON object, the exit code, the bin script, the
// embedded PostgreSQL, an unreachable or unmigrated database) runs as real subprocesses.

const root = fileURLToPath(new URL('..', import.meta.url));
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}) {
  return runProcess(command, args, { cwd: options.cwd ?? root, env: options.env ?? cliEnv() });
}

let db: TestDatabase;

function cliEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'info', ...extra };
}

/** The CLI's entry point with these arguments, in this process. */
function admin(...args: string[]) {
  return adminInProcess(args, cliEnv());
}

/** Runs with --json; asserts success and that stdout is exactly one JSON object. */
async function adminJson(...args: string[]): Promise<Record<string, unknown>> {
  const result = await admin(...args, '--json');
  assert.equal(result.code, 0, `exit code 0 for ${args.join(' ')}; stderr: ${result.stderr}`);
  return oneJsonObject(result.stdout);
}

function oneJsonObject(stdout: string): Record<string, unknown> {
  assert.ok(stdout.endsWith('\n'), 'stdout ends with a newline');
  assert.equal(stdout.trimEnd().split('\n').length, 1, `one line on stdout: ${stdout}`);
  const value = JSON.parse(stdout);
  assert.ok(value && typeof value === 'object' && !Array.isArray(value), 'stdout is a JSON object');
  return value;
}

/** A refusal: the exit code, nothing on stdout, one line on stderr. */
function assertRefused(result: Run, code: number, message: RegExp) {
  assert.equal(result.code, code, `exit code; stderr: ${result.stderr}`);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^error: [^\n]+\n$/, 'exactly one line on stderr');
  assert.match(result.stderr, message);
}

const em = () => db.orm.em.fork();

let workspaceId: string;
let ownerId: string;
let memberId: string;

before(async () => {
  db = await freshDatabase();
  const setup = em();
  workspaceId = (await createWorkspace(setup, { name: 'Fixture' })).id;
  ownerId = (await createUser(setup, { workspaceId, email: 'owner@fixture.test', role: 'owner' })).id;
  memberId = (await createUser(setup, { workspaceId, email: 'member@fixture.test', role: 'member' })).id;
});

after(async () => {
  await db.close();
});

test('workspace create prints id, name and plan, standard by default, and stores the workspace', async () => {
  const created = await adminJson('workspace', 'create', '--name', 'Acme Support');
  assert.deepEqual(Object.keys(created).sort(), ['id', 'name', 'plan']);
  assert.match(String(created.id), uuid);
  assert.equal(created.name, 'Acme Support');
  assert.equal(created.plan, 'standard');
  const stored = await em().findOneOrFail(Workspace, { id: String(created.id) });
  assert.equal(stored.name, 'Acme Support');
  assert.equal(stored.plan, 'standard');

  const trial = await adminJson('workspace', 'create', '--name=Trial Co', '--plan', 'trial');
  assert.equal(trial.plan, 'trial');
  assert.equal((await em().findOneOrFail(Workspace, { id: String(trial.id) })).plan, 'trial');
});

test('user create prints id and role; user set-role changes the stored role', async () => {
  const created = await adminJson(
    'user',
    'create',
    '--workspace',
    workspaceId,
    '--email',
    'Ada@Fixture.test',
    '--role',
    'admin',
  );
  assert.deepEqual(Object.keys(created).sort(), ['id', 'role']);
  assert.match(String(created.id), uuid);
  assert.equal(created.role, 'admin');
  const stored = await em().findOneOrFail(User, { id: String(created.id) });
  assert.equal(stored.workspace, workspaceId);
  assert.equal(stored.email, 'ada@fixture.test');
  assert.equal(stored.role, 'admin');

  const changed = await adminJson('user', 'set-role', '--id', String(created.id), '--role', 'viewer');
  assert.deepEqual(changed, { id: created.id, role: 'viewer' });
  assert.equal((await em().findOneOrFail(User, { id: String(created.id) })).role, 'viewer');

  const removed = await adminJson('user', 'remove', '--id', String(created.id));
  assert.deepEqual(removed, { id: created.id, removed: true });
  assert.equal(await em().findOne(User, { id: String(created.id) }), null);
});

test('key create prints the secret once and stores only its hash; key revoke sets revokedAt', async () => {
  const created = await adminJson(
    'key',
    'create',
    '--workspace',
    workspaceId,
    '--user',
    ownerId,
    '--name',
    'CI key',
    '--scopes',
    'calls:write, agents:read',
    '--expires-at',
    '2099-01-31T12:00:00Z',
  );
  assert.deepEqual(Object.keys(created).sort(), ['id', 'secret']);
  assert.match(String(created.id), uuid);
  const secret = String(created.secret);
  assert.match(secret, /^svc_live_[A-Za-z0-9_-]{43}$/);

  const stored = await em().findOneOrFail(ApiKey, { id: String(created.id) });
  assert.equal(stored.secretHash, hashApiKeySecret(secret));
  assert.ok(!JSON.stringify(stored).includes(secret), 'the secret itself is not stored');
  assert.deepEqual(stored.scopes, ['calls:write', 'agents:read']);
  assert.equal(stored.workspace, workspaceId);
  assert.equal(stored.createdBy, ownerId);
  assert.equal(stored.name, 'CI key');
  assert.equal(stored.expiresAt?.toISOString(), '2099-01-31T12:00:00.000Z');
  assert.equal(stored.revokedAt, null);

  const revoked = await adminJson('key', 'revoke', '--id', String(created.id));
  assert.deepEqual(revoked, { id: created.id, revoked: true });
  const revokedAt = (await em().findOneOrFail(ApiKey, { id: String(created.id) })).revokedAt;
  assert.ok(revokedAt instanceof Date);
  assert.ok(Math.abs(revokedAt.getTime() - Date.now()) < 60_000);

  // Revoking again succeeds and keeps the first revocation time.
  assert.deepEqual(await adminJson('key', 'revoke', '--id', String(created.id)), revoked);
  assert.equal(
    (await em().findOneOrFail(ApiKey, { id: String(created.id) })).revokedAt?.getTime(),
    revokedAt.getTime(),
  );
});

test('key create without --expires-at makes a key that never expires', async () => {
  const created = await adminJson(
    'key',
    'create',
    '--workspace',
    workspaceId,
    '--user',
    ownerId,
    '--name',
    'forever',
    '--scopes',
    'numbers:read',
  );
  const stored = await em().findOneOrFail(ApiKey, { id: String(created.id) });
  assert.equal(stored.expiresAt, null);
  assert.equal(stored.secretHash, hashApiKeySecret(String(created.secret)));
});

test('number create prints id and number and stores the label', async () => {
  const created = await adminJson(
    'number',
    'create',
    '--workspace',
    workspaceId,
    '--number',
    '+4721000042',
    '--label',
    'Oslo office',
  );
  assert.deepEqual(Object.keys(created).sort(), ['id', 'number']);
  assert.match(String(created.id), uuid);
  assert.equal(created.number, '+4721000042');
  const stored = await em().findOneOrFail(PhoneNumber, { id: String(created.id) });
  assert.equal(stored.workspace, workspaceId);
  assert.equal(stored.label, 'Oslo office');
  assert.equal(stored.status, 'active');

  // A number belongs to one workspace only.
  const other = await createWorkspace(em(), { name: 'Other' });
  assertRefused(
    await admin('number', 'create', '--workspace', other.id, '--number', '+4721000042'),
    1,
    /already registered/,
  );
});

test('limits set changes the limits given, keeps the others, and prints all of them', async () => {
  const workspace = await createWorkspace(em(), { name: 'Limited' });
  const limits = await adminJson(
    'limits',
    'set',
    '--workspace',
    workspace.id,
    '--requests-per-second',
    '7',
    '--calls-per-day',
    '0',
  );
  assert.deepEqual(limits, {
    workspace_id: workspace.id,
    requests_per_second: 7,
    calls_per_minute: workspace.callsPerMinute,
    calls_per_day: 0,
    minutes_quota: workspace.minutesQuota,
    dialing_countries: ['NO', 'SE', 'DK', 'FI', 'US', 'CA'],
    dialing_countries_from: 'deployment',
    recording_retention_days: null,
  });
  const stored = await em().findOneOrFail(Workspace, { id: workspace.id });
  assert.equal(stored.requestsPerSecond, 7);
  assert.equal(stored.callsPerDay, 0);
  assert.equal(stored.callsPerMinute, workspace.callsPerMinute);

  const more = await adminJson(
    'limits',
    'set',
    '--workspace',
    workspace.id,
    '--calls-per-minute',
    '120',
    '--minutes-quota',
    '50000',
  );
  assert.equal(more.requests_per_second, 7, 'an earlier change stays');
  assert.equal(more.calls_per_minute, 120);
  assert.equal(more.minutes_quota, 50_000);
  const final = await em().findOneOrFail(Workspace, { id: workspace.id });
  assert.deepEqual(
    [final.requestsPerSecond, final.callsPerMinute, final.callsPerDay, final.minutesQuota],
    [7, 120, 0, 50_000],
  );

  // A refused value changes nothing, not even the valid ones beside it.
  assertRefused(
    await admin(
      'limits',
      'set',
      '--workspace',
      workspace.id,
      '--calls-per-day',
      '9',
      '--minutes-quota',
      '-1',
    ),
    1,
    /minutes_quota/,
  );
  assert.equal((await em().findOneOrFail(Workspace, { id: workspace.id })).callsPerDay, 0);
});

test('limits set --dialing-countries: its own countries, * or back to the deployment’s; limits show prints them', async () => {
  const workspace = await createWorkspace(em(), { name: 'Abroad' });
  const set = await adminJson('limits', 'set', '--workspace', workspace.id, '--dialing-countries', 'no, gb');
  assert.deepEqual(set.dialing_countries, ['NO', 'GB']);
  assert.equal(set.dialing_countries_from, 'workspace');
  assert.deepEqual((await em().findOneOrFail(Workspace, { id: workspace.id })).dialingCountries, [
    'NO',
    'GB',
  ]);
  const shown = await adminJson('limits', 'show', '--workspace', workspace.id);
  assert.deepEqual(shown, set);

  const everywhere = await adminJson(
    'limits',
    'set',
    '--workspace',
    workspace.id,
    '--dialing-countries',
    '*',
  );
  assert.equal(everywhere.dialing_countries, '*');
  // DIALING_COUNTRIES is the deployment's; `default` returns to it.
  const back = await adminInProcess(
    ['limits', 'set', '--workspace', workspace.id, '--dialing-countries', 'default', '--json'],
    cliEnv({ DIALING_COUNTRIES: 'SE,DK' }),
  );
  assert.equal(back.code, 0, back.stderr);
  assert.deepEqual(oneJsonObject(back.stdout).dialing_countries, ['SE', 'DK']);
  assert.equal(oneJsonObject(back.stdout).dialing_countries_from, 'deployment');
  assert.equal((await em().findOneOrFail(Workspace, { id: workspace.id })).dialingCountries, null);

  const text = await admin('limits', 'show', '--workspace', workspace.id);
  assert.match(text.stdout, /^ {2}dialing_countries: NO,SE,DK,FI,US,CA$/m);
  assertRefused(
    await admin('limits', 'set', '--workspace', workspace.id, '--dialing-countries', 'NO,XX'),
    1,
    /XX is not an ISO 3166 alpha-2 country code/,
  );
  assertRefused(
    await admin('limits', 'show', '--workspace', '00000000-0000-4000-8000-000000000000'),
    1,
    /no workspace with id/,
  );
});

test('limits set --recording-retention-days: days (0: none kept), or none (until deleted); limits show prints it', async () => {
  const workspace = await createWorkspace(em(), { name: 'Retains' });
  const set = await adminJson(
    'limits',
    'set',
    '--workspace',
    workspace.id,
    '--recording-retention-days',
    '30',
  );
  assert.equal(set.recording_retention_days, 30);
  assert.equal((await em().findOneOrFail(Workspace, { id: workspace.id })).recordingRetentionDays, 30);
  assert.deepEqual(await adminJson('limits', 'show', '--workspace', workspace.id), set);
  const none = await adminJson(
    'limits',
    'set',
    '--workspace',
    workspace.id,
    '--recording-retention-days',
    '0',
  );
  assert.equal(none.recording_retention_days, 0);
  const kept = await adminJson(
    'limits',
    'set',
    '--workspace',
    workspace.id,
    '--recording-retention-days',
    'none',
  );
  assert.equal(kept.recording_retention_days, null);
  assert.match(
    (await admin('limits', 'show', '--workspace', workspace.id)).stdout,
    /^ {2}recording_retention_days: none \(kept until deleted\)$/m,
  );
  for (const wrong of ['-1', '3651', '1.5', 'forever', '']) {
    assertRefused(
      await admin('limits', 'set', '--workspace', workspace.id, '--recording-retention-days', wrong),
      1,
      /recording_retention_days must be a whole number of days from 0 to 3650, or none/,
    );
  }
  assert.equal((await em().findOneOrFail(Workspace, { id: workspace.id })).recordingRetentionDays, null);
});

test('bootstrap makes a workspace, an owner, a key with every scope and two numbers that fit together', async () => {
  const demo = await adminJson('bootstrap');
  assert.deepEqual(Object.keys(demo).sort(), ['api_base_url', 'key', 'numbers', 'owner', 'workspace']);
  const workspace = demo.workspace as { id: string; name: string; plan: string };
  const owner = demo.owner as { id: string; email: string; role: string };
  const key = demo.key as { id: string; secret: string; scopes: string[] };
  const numbers = demo.numbers as { id: string; number: string; label: string }[];
  assert.equal(demo.api_base_url, 'http://127.0.0.1:8080/v1');

  assert.equal((await em().findOneOrFail(Workspace, { id: workspace.id })).plan, workspace.plan);
  const storedOwner = await em().findOneOrFail(User, { id: owner.id });
  assert.equal(storedOwner.workspace, workspace.id);
  assert.equal(storedOwner.role, 'owner');

  // The printed secret is a working key: its hash finds an unrevoked key of that owner.
  const storedKey = await em().findOneOrFail(ApiKey, { secretHash: hashApiKeySecret(key.secret) });
  assert.equal(storedKey.id, key.id);
  assert.equal(storedKey.workspace, workspace.id);
  assert.equal(storedKey.createdBy, owner.id);
  assert.equal(storedKey.revokedAt, null);
  assert.equal(storedKey.expiresAt, null);
  assert.deepEqual([...storedKey.scopes].sort(), [...SCOPES].sort());
  assert.deepEqual(key.scopes, storedKey.scopes);

  assert.equal(numbers.length, 2);
  for (const number of numbers) {
    const stored = await em().findOneOrFail(PhoneNumber, { id: number.id });
    assert.equal(stored.workspace, workspace.id);
    assert.equal(stored.number, number.number);
    assert.match(number.number, /^\+[1-9]\d{6,14}$/);
  }

  // A second run makes a separate set: new workspace, new numbers.
  const again = await adminJson('bootstrap', '--json');
  assert.notEqual((again.workspace as { id: string }).id, workspace.id);
  const againNumbers = (again.numbers as { number: string }[]).map((n) => n.number);
  assert.equal(againNumbers.filter((n) => numbers.some((m) => m.number === n)).length, 0);

  // PORT moves the hint with the API.
  const elsewhere = await adminInProcess(['bootstrap', '--json'], cliEnv({ PORT: '9191' }));
  assert.equal(elsewhere.code, 0, elsewhere.stderr);
  assert.equal(oneJsonObject(elsewhere.stdout).api_base_url, 'http://127.0.0.1:9191/v1');
});

test('the key bootstrap prints works against the API and sees the two numbers', async () => {
  const demo = await adminJson('bootstrap');
  const api = await startApi({ orm: db.orm });
  try {
    const client = api.client((demo.key as { secret: string }).secret);
    const me = await client.get('/me');
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.workspace_id, (demo.workspace as { id: string }).id);
    assert.deepEqual([...me.body.scopes].sort(), [...SCOPES].sort());
    const numbers = await client.get('/phone-numbers');
    assert.equal(numbers.status, 200, numbers.text);
    assert.deepEqual(
      numbers.body.data.map((n: { number: string }) => n.number).sort(),
      (demo.numbers as { number: string }[]).map((n) => n.number).sort(),
    );
  } finally {
    await api.close();
  }
});

describe('refusals: non-zero exit, one line on stderr, nothing on stdout', { concurrency: 4 }, () => {
  const unknownId = '00000000-0000-4000-8000-000000000000';
  const cases: [string, () => string[], number, RegExp][] = [
    [
      'unknown workspace',
      () => ['user', 'create', '--workspace', unknownId, '--email', 'a@b.test', '--role', 'owner'],
      1,
      /no workspace with id/,
    ],
    [
      'workspace id that is not a uuid',
      () => ['number', 'create', '--workspace', 'acme', '--number', '+4721000001'],
      1,
      /no workspace with id acme/,
    ],
    [
      'bad role',
      () => ['user', 'create', '--workspace', workspaceId, '--email', 'a@b.test', '--role', 'boss'],
      1,
      /role must be one of owner, admin, member, viewer/,
    ],
    [
      'bad role on set-role',
      () => ['user', 'set-role', '--id', memberId, '--role', 'root'],
      1,
      /role must be one of/,
    ],
    ['unknown user on remove', () => ['user', 'remove', '--id', unknownId], 1, /no user with id/],
    [
      'unknown user on set-role',
      () => ['user', 'set-role', '--id', unknownId, '--role', 'admin'],
      1,
      /no user with id/,
    ],
    [
      'bad plan',
      () => ['workspace', 'create', '--name', 'X', '--plan', 'gold'],
      1,
      /plan must be one of trial, standard/,
    ],
    [
      'bad number',
      () => ['number', 'create', '--workspace', workspaceId, '--number', '004721000000'],
      1,
      /E\.164/,
    ],
    [
      'unknown scope',
      () => [
        'key',
        'create',
        '--workspace',
        workspaceId,
        '--user',
        ownerId,
        '--name',
        'k',
        '--scopes',
        'calls:write,calls:delete',
      ],
      1,
      /unknown scope calls:delete/,
    ],
    [
      'key for a member',
      () => [
        'key',
        'create',
        '--workspace',
        workspaceId,
        '--user',
        memberId,
        '--name',
        'k',
        '--scopes',
        'calls:read',
      ],
      1,
      /only owners and admins/,
    ],
    [
      'key expiring in the past',
      () => [
        'key',
        'create',
        '--workspace',
        workspaceId,
        '--user',
        ownerId,
        '--name',
        'k',
        '--scopes',
        'calls:read',
        '--expires-at',
        '2001-01-01',
      ],
      1,
      /in the past/,
    ],
    ['unknown key', () => ['key', 'revoke', '--id', unknownId], 1, /no key with id/],
    [
      'unknown workspace for limits',
      () => ['limits', 'set', '--workspace', unknownId, '--calls-per-day', '1'],
      1,
      /no workspace with id/,
    ],
    [
      'missing flag',
      () => ['user', 'create', '--workspace', workspaceId, '--email', 'a@b.test'],
      2,
      /needs --role/,
    ],
    ['flag without its value', () => ['workspace', 'create', '--name'], 2, /--name needs a value/],
    [
      'unknown flag',
      () => ['workspace', 'create', '--name', 'X', '--colour', 'red'],
      2,
      /unknown flag --colour/,
    ],
    [
      'flag given twice',
      () => ['workspace', 'create', '--name', 'X', '--name', 'Y'],
      2,
      /--name is given more than once/,
    ],
    ['stray argument', () => ['workspace', 'create', 'Acme', '--name', 'X'], 2, /unexpected argument "Acme"/],
    [
      'unknown command',
      () => ['workspace', 'delete', '--name', 'X'],
      2,
      /unknown command "workspace delete"/,
    ],
    ['no command', () => [], 2, /no command given/],
    [
      'not a whole number',
      () => ['limits', 'set', '--workspace', workspaceId, '--calls-per-day', '1.5'],
      2,
      /--calls-per-day must be a whole number/,
    ],
    [
      'not a date',
      () => [
        'key',
        'create',
        '--workspace',
        workspaceId,
        '--user',
        ownerId,
        '--name',
        'k',
        '--scopes',
        'calls:read',
        '--expires-at',
        'tomorrow',
      ],
      2,
      /--expires-at must be an ISO 8601 date/,
    ],
    [
      'a day that does not exist',
      () => [
        'key',
        'create',
        '--workspace',
        workspaceId,
        '--user',
        ownerId,
        '--name',
        'k',
        '--scopes',
        'calls:read',
        '--expires-at',
        '2099-02-31',
      ],
      2,
      /--expires-at must be an ISO 8601 date/,
    ],
    [
      'date-time without a zone',
      () => [
        'key',
        'create',
        '--workspace',
        workspaceId,
        '--user',
        ownerId,
        '--name',
        'k',
        '--scopes',
        'calls:read',
        '--expires-at',
        '2099-01-01T10:00',
      ],
      2,
      /--expires-at/,
    ],
  ];
  for (const [name, args, code, message] of cases) {
    test(name, async () => {
      assertRefused(await admin(...args(), '--json'), code, message);
    });
  }
});

test('as a process: a refusal exits 1 and reads the same with or without --json; a wrong command line exits 2', async () => {
  const args = ['key', 'revoke', '--id', '00000000-0000-4000-8000-000000000000'];
  const [plain, json, usage] = await Promise.all([
    adminProcess(args, { env: cliEnv() }),
    adminProcess([...args, '--json'], { env: cliEnv() }),
    adminProcess(['workspace', 'create', '--name', 'X', '--colour', 'red'], { env: cliEnv() }),
  ]);
  assertRefused(plain, 1, /no key with id/);
  assert.deepEqual(json, plain);
  assertRefused(usage, 2, /unknown flag --colour/);
});

test('an unreachable database is a one-line error that says so', async () => {
  const result = await run(
    process.execPath,
    ['--import', 'tsx', adminTs, 'workspace', 'create', '--name', 'X', '--json'],
    {
      env: cliEnv({ DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:1/nowhere' }),
    },
  );
  assertRefused(result, 1, /^error: the database is unreachable \(.*ECONNREFUSED.*\)$/m);
});

test('a refused key create leaves no key behind', async () => {
  const keysBefore = await em().count(ApiKey, {});
  await admin(
    'key',
    'create',
    '--workspace',
    workspaceId,
    '--user',
    ownerId,
    '--name',
    'k',
    '--scopes',
    'nope',
  );
  assert.equal(await em().count(ApiKey, {}), keysBefore);
});

test('without --json the output is a short human-readable text', async () => {
  const result = await admin('workspace', 'create', '--name', 'Readable');
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^Created workspace [0-9a-f-]{36} "Readable" \(plan standard\)\n$/);
  assert.throws(() => JSON.parse(result.stdout));

  const key = await admin(
    'key',
    'create',
    '--workspace',
    workspaceId,
    '--user',
    ownerId,
    '--name',
    'k',
    '--scopes',
    'calls:read',
  );
  assert.equal(key.code, 0, key.stderr);
  const secret = key.stdout.match(/svc_live_[A-Za-z0-9_-]{43}/)?.[0];
  assert.ok(secret, 'the secret is shown');
  assert.ok(await em().findOne(ApiKey, { secretHash: hashApiKeySecret(secret) }));
});

test('--help lists every command and each command lists its flags', async () => {
  const overall = await admin('--help');
  assert.equal(overall.code, 0);
  for (const name of [
    'workspace create',
    'user create',
    'user set-role',
    'user remove',
    'key create',
    'key revoke',
    'number create',
    'limits set',
    'limits show',
    'bootstrap',
  ]) {
    assert.ok(overall.stdout.includes(name), `help lists ${name}`);
  }
  const keyHelp = await admin('key', 'create', '--help');
  assert.equal(keyHelp.code, 0);
  for (const flag of ['--workspace', '--user', '--name', '--scopes', '--expires-at']) {
    assert.ok(keyHelp.stdout.includes(flag), `key create help lists ${flag}`);
  }
  const group = await admin('limits', '--help');
  assert.equal(group.code, 0);
  assert.match(group.stdout, /limits set/);
});

test('on a database that was never migrated, the CLI migrates it first', async () => {
  const name = `admin_fresh_${randomBytes(4).toString('hex')}`;
  const serverUrl = db.url.replace(/\/[^/?]+$/, '/postgres');
  const server = new pg.Client({ connectionString: serverUrl });
  await server.connect();
  try {
    await server.query(`create database "${name}"`);
    const url = db.url.replace(/\/[^/?]+$/, `/${name}`);
    const result = await run(process.execPath, ['--import', 'tsx', adminTs, 'bootstrap', '--json'], {
      env: cliEnv({ DATABASE_URL: url }),
    });
    assert.equal(result.code, 0, result.stderr);
    const demo = oneJsonObject(result.stdout);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const rows = await client.query('select name from workspaces where id = $1', [
        (demo.workspace as { id: string }).id,
      ]);
      assert.equal(rows.rowCount, 1);
      assert.ok(
        ((await client.query('select count(*)::int as n from schema_migrations')).rows[0].n as number) >= 1,
      );
    } finally {
      await client.end();
    }
  } finally {
    await server.query(`drop database if exists "${name}" with (force)`);
    await server.end();
  }
});

test('scripts/admin.sh, reached through a symlink from another directory, runs the CLI', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'admin-bin-'));
  try {
    const link = path.join(dir, 'voice-agent-admin');
    symlinkSync(path.join(root, 'scripts/admin.sh'), link);
    const result = await run(link, ['workspace', 'create', '--name', 'Via bin', '--json'], { cwd: dir });
    assert.equal(result.code, 0, result.stderr);
    const created = oneJsonObject(result.stdout);
    assert.equal((await em().findOneOrFail(Workspace, { id: String(created.id) })).name, 'Via bin');

    const refused = await run(link, ['key', 'revoke', '--id', 'nope'], { cwd: dir });
    assertRefused(refused, 1, /no key with id nope/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('without DATABASE_URL: the embedded PostgreSQL under .data/', () => {
  // Run from a scratch directory with a port of its own, so the developer's .data/ is untouched.
  let dir: string;
  let port: number;
  const env = () => {
    const { DATABASE_URL: _unset, ...rest } = cliEnv({ EMBEDDED_PG_PORT: String(port) });
    return rest;
  };
  const adminHere = (...args: string[]) =>
    run(process.execPath, ['--import', import.meta.resolve('tsx'), adminTs, ...args], {
      cwd: dir,
      env: env(),
    });
  const accepts = async () => {
    const client = new pg.Client({
      connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
      connectionTimeoutMillis: 1000,
    });
    try {
      await client.connect();
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  };

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'admin-embedded-'));
    // Run as root, PostgreSQL runs as its own user, which must reach the data directory.
    chmodSync(dir, 0o755);
    port = await freePort();
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('starts it when it is not running, and stops it again before exiting', async () => {
    const created = await adminHere('workspace', 'create', '--name', 'Embedded', '--json');
    assert.equal(created.code, 0, created.stderr);
    const workspace = oneJsonObject(created.stdout);
    assert.ok(existsSync(path.join(dir, '.data/postgres/PG_VERSION')), 'data kept under .data/postgres');
    assert.equal(await accepts(), false, 'the server it started is stopped');

    // A second run starts it again and finds the data of the first.
    const limits = await adminHere('limits', 'set', '--workspace', String(workspace.id), '--json');
    assert.equal(limits.code, 0, limits.stderr);
    assert.equal(oneJsonObject(limits.stdout).workspace_id, workspace.id);
    assert.equal(await accepts(), false);
  });

  test('joins it when it is running (as under npm start) and leaves it running', async () => {
    const server = await startLocalPostgres({ dataDir: path.join(dir, '.data/postgres'), port });
    try {
      const created = await adminHere('workspace', 'create', '--name', 'Joined', '--json');
      assert.equal(created.code, 0, created.stderr);
      oneJsonObject(created.stdout);
      assert.equal(await accepts(), true, 'the running server is left running');
    } finally {
      await server.stop();
    }
  });
});
