import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { runCli } from '../scripts/admin/cli.js';
import { commands } from '../scripts/admin/commands/index.js';
import { parseInvocation } from '../scripts/admin/parse-args.js';

// The operator CLI's command line, word for word: every usage error's one line and exit code 2,
// every help text (test/fixtures/admin-help/, the operations contract's interface), and the values
// a command receives. None of this touches a database: the command line is read first.
// test/admin-cli.test.ts runs the commands themselves.

const WORKSPACE_ID = '6f1c2b1e-8a4d-4c1e-9d3a-2b7e5f0a9c11';

async function cli(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { out: (text) => (stdout += text), err: (text) => (stderr += text) }, {});
  return { code, stdout, stderr };
}

function runValues(argv: string[]) {
  const invocation = parseInvocation(argv, commands);
  assert.equal(invocation.kind, 'run');
  return invocation.kind === 'run' ? invocation : assert.fail('not run');
}

const fixture = (name: string) =>
  readFileSync(new URL(`./fixtures/admin-help/${name}.txt`, import.meta.url), 'utf8');

const callsPerDay = (raw: string) => ['limits', 'set', '--workspace', WORKSPACE_ID, '--calls-per-day', raw];
const keyCreate = (...flags: string[]) => ['key', 'create', '--workspace', WORKSPACE_ID, ...flags];
const workspaceCreate = (...flags: string[]) => ['workspace', 'create', ...flags];
const unknownFlag = (flag: string) =>
  `unknown flag ${flag} for "workspace create"; its flags are --name, --plan, --json, --help`;
const NOT_A_DATE =
  '--expires-at must be an ISO 8601 date (2030-01-31) or date-time with zone (2030-01-31T12:00:00Z)';

describe('a wrong command line: exit code 2 and exactly this line on stderr, nothing on stdout', () => {
  const cases: [string, string[], string][] = [
    ['no command', [], 'no command given; run with --help to list the commands'],
    ['only global flags', ['--json'], 'no command given; run with --help to list the commands'],
    ['unknown command', ['frobnicate'], 'unknown command "frobnicate"; run with --help to list the commands'],
    ['a group without its subcommand', ['workspace'], '"workspace" needs a subcommand: workspace create'],
    [
      'a group with a flag but no subcommand',
      ['user', '--email', 'a@b.test'],
      '"user" needs a subcommand: user create, user set-role, user remove, user invite',
    ],
    [
      'unknown subcommand',
      ['workspace', 'delete', '--name', 'X'],
      'unknown command "workspace delete"; workspace commands: workspace create',
    ],
    [
      'a word after the command',
      ['workspace', 'create', 'Acme', '--name', 'X'],
      'unexpected argument "Acme" after "workspace create"',
    ],
    ['a word among the flags', ['workspace', 'create', '--name', 'X', 'Acme'], 'unexpected argument "Acme"'],
    ['a short flag', ['workspace', 'create', '--name', 'X', '-p'], 'unexpected argument "-p"'],
    ['short flags together', ['workspace', 'create', '--name', 'X', '-pq'], 'unexpected argument "-pq"'],
    ['unknown flag', workspaceCreate('--name', 'X', '--colour', 'red'), unknownFlag('--colour')],
    [
      'unknown flag with its value after =',
      workspaceCreate('--colour=red', '--name', 'X'),
      unknownFlag('--colour'),
    ],
    ['the end-of-flags marker', workspaceCreate('--name', 'X', '--', 'Y'), unknownFlag('--')],
    [
      'flag given twice',
      ['workspace', 'create', '--name', 'X', '--name=Y'],
      '--name is given more than once',
    ],
    ['flag without its value, last', ['workspace', 'create', '--name'], '--name needs a value (NAME)'],
    [
      'flag without its value, before another flag',
      ['workspace', 'create', '--name', '--plan', 'trial'],
      '--name needs a value (NAME)',
    ],
    [
      'flag without its value, before --json',
      ['workspace', 'create', '--name', '--json'],
      '--name needs a value (NAME)',
    ],
    [
      'a required flag missing',
      ['user', 'create', '--workspace', WORKSPACE_ID, '--email', 'a@b.test'],
      '"user create" needs --role; run it with --help for its flags',
    ],
    [
      'several required flags missing',
      ['user', 'create'],
      '"user create" needs --workspace, --email, --role; run it with --help for its flags',
    ],
    ['not a whole number', callsPerDay('1.5'), '--calls-per-day must be a whole number, got "1.5"'],
    [
      'a whole number too large to be exact',
      callsPerDay('9007199254740993'),
      '--calls-per-day must be a whole number, got "9007199254740993"',
    ],
    ['an empty list', keyCreate('--scopes', ' , '), '--scopes needs at least one value (a:read,b:write,...)'],
    ['not a date', keyCreate('--expires-at', 'tomorrow'), `${NOT_A_DATE}, got "tomorrow"`],
    ['a day that does not exist', keyCreate('--expires-at', '2099-02-31'), `${NOT_A_DATE}, got "2099-02-31"`],
    [
      'a date-time without a zone',
      keyCreate('--expires-at', '2099-01-01T10:00'),
      `${NOT_A_DATE}, got "2099-01-01T10:00"`,
    ],
  ];
  for (const [name, argv, message] of cases) {
    test(name, async () => {
      assert.deepEqual(await cli(...argv), { code: 2, stdout: '', stderr: `error: ${message}\n` });
    });
  }
});

describe('help: exit code 0 and the text of test/fixtures/admin-help/ on stdout', () => {
  const cases: [string, string[]][] = [
    ['overall', ['--help']],
    ['overall', ['-h']],
    ['overall', ['--json', '--help']],
    ...['workspace', 'user', 'key', 'number', 'limits', 'simulate'].map((group): [string, string[]] => [
      group,
      [group, '--help'],
    ]),
    ...commands.map((command): [string, string[]] => [
      command.name.replace(' ', '-'),
      [...command.name.split(' '), '--help'],
    ]),
    ['workspace-create', ['workspace', 'create', '--name', 'X', '-h']],
    ['workspace-create', ['workspace', 'create', '--colour', '--help']],
  ];
  for (const [name, argv] of cases) {
    test(`${argv.join(' ')} → ${name}.txt`, async () => {
      assert.deepEqual(await cli(...argv), { code: 0, stdout: fixture(name), stderr: '' });
    });
  }
  test('there is a fixture for every command, so a new one gets its help pinned too', () => {
    for (const command of commands) assert.ok(fixture(command.name.replace(' ', '-')));
  });
});

describe('what a command receives', () => {
  test('flags as the spec types them, keyed in camelCase; --json anywhere', () => {
    const invocation = runValues([
      'limits',
      '--json',
      'set',
      '--workspace',
      WORKSPACE_ID,
      '--calls-per-day=-5',
      '--minutes-quota',
      '0',
    ]);
    assert.equal(invocation.command.name, 'limits set');
    assert.equal(invocation.json, true);
    assert.deepEqual(invocation.values, { workspace: WORKSPACE_ID, callsPerDay: -5, minutesQuota: 0 });
  });

  test('a value may start with one dash, or with two after =', () => {
    const { values, json } = runValues([
      'number',
      'create',
      '--workspace',
      WORKSPACE_ID,
      '--number',
      '+4791234567',
      '--label',
      '-x-',
    ]);
    assert.equal(json, false);
    assert.deepEqual(values, { workspace: WORKSPACE_ID, number: '+4791234567', label: '-x-' });
    assert.deepEqual(runValues(['workspace', 'create', '--name=--odd--']).values, { name: '--odd--' });
    assert.deepEqual(runValues(['workspace', 'create', '--name=']).values, { name: '' });
  });

  test('a negative number after a space is the value', () => {
    const { values } = runValues(['limits', 'set', '--workspace', WORKSPACE_ID, '--calls-per-day', '-5']);
    assert.deepEqual(values, { workspace: WORKSPACE_ID, callsPerDay: -5 });
  });

  test('lists are split on commas and trimmed; dates are Dates', () => {
    const { values } = runValues([
      'key',
      'create',
      '--workspace',
      WORKSPACE_ID,
      '--user',
      WORKSPACE_ID,
      '--name',
      'k',
      '--scopes',
      ' calls:read, ,agents:write ',
      '--expires-at',
      '2030-01-31',
    ]);
    assert.deepEqual(values.scopes, ['calls:read', 'agents:write']);
    assert.deepEqual(values.expiresAt, new Date('2030-01-31T00:00:00Z'));
  });
});
