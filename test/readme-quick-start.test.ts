import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { adminInProcess } from './support/admin-cli.js';
import { type CallStack, startCallStack } from './support/call-stack.js';
import { runProcess } from './support/run-process.js';

// README's quick start as a new user types it: the marked ```sh blocks of "Run it", in order, in
// one bash (so their variables carry over, as in a terminal), against the API and the call workers
// (the simulator's clock at 1/100). Only the base URL and $KEY are put in: the operator CLI lines
// run through the CLI's own entry point in this process (a process start costs seconds), and the
// key is the secret that bootstrap printed there. A `curl` first in PATH hands each call to the
// real one and keeps its status and answer, so every answer is checked.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MARKER =
  '<!-- quick start: test/readme-quick-start.test.ts runs the blocks marked like this one, in order -->';
const README_BASE_URL = 'http://127.0.0.1:8080';
const ADMIN_LINE = /^npm run --silent admin -- (.+)$/;
const KEY_LINE = /^export KEY=\S+/;

/** The marked blocks of README.md, as written. */
function quickStartBlocks(): string[] {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const blocks = readme
    .split(MARKER)
    .slice(1)
    .map((rest) => {
      const fenced = /^\s*```sh\n([\s\S]*?)\n```/.exec(rest);
      assert.ok(fenced, `a \`\`\`sh block right after the marker:\n${rest.slice(0, 200)}`);
      return fenced[1]!;
    });
  assert.ok(blocks.length >= 2, 'README marks the quick start blocks');
  return blocks;
}

interface CurlCall {
  args: string[];
  status: number;
  body: string;
}

/** A `curl` that runs the real one, keeping each call's arguments, status and answer in `logDir`. */
function curlRecorder(binDir: string, logDir: string): void {
  const realCurl = execFileSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).trim();
  const script = `#!/bin/bash
n=$(ls "${logDir}" | grep -c '\\.args$')
printf '%s\\0' "$@" > "${logDir}/$n.args"
"${realCurl}" "$@" -o "${logDir}/$n.body" -w '%{http_code}' > "${logDir}/$n.status"
code=$?
cat "${logDir}/$n.body"
exit $code
`;
  writeFileSync(path.join(binDir, 'curl'), script);
  chmodSync(path.join(binDir, 'curl'), 0o755);
}

function recordedCalls(logDir: string): CurlCall[] {
  const count = readdirSync(logDir).filter((name) => name.endsWith('.args')).length;
  return Array.from({ length: count }, (_, n) => ({
    args: readFileSync(path.join(logDir, `${n}.args`), 'utf8')
      .split('\0')
      .slice(0, -1),
    status: Number(readFileSync(path.join(logDir, `${n}.status`), 'utf8')),
    body: readFileSync(path.join(logDir, `${n}.body`), 'utf8'),
  }));
}

let stack: CallStack;
let workDir: string;
before(async () => {
  stack = await startCallStack({ prefix: 'readme', simTimeScale: 0.01 });
  workDir = mkdtempSync(path.join(os.tmpdir(), 'readme-quick-start-'));
});
after(async () => {
  await stack?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

test('the quick start goes from bootstrap to a completed call with its transcript and analysis', async () => {
  const lines = quickStartBlocks().join('\n').split('\n');

  // The operator CLI lines first, as the CLI runs them; bootstrap's key becomes $KEY.
  let key: string | undefined;
  for (const line of lines) {
    const admin = ADMIN_LINE.exec(line);
    if (!admin) continue;
    const run = await adminInProcess(admin[1]!.split(' '), { ...process.env, DATABASE_URL: stack.db.url });
    assert.equal(run.code, 0, run.stderr);
    key ??= JSON.parse(run.stdout).key?.secret;
  }
  assert.match(key ?? '', /^svc_live_/, 'bootstrap printed the key');

  const script = lines
    .filter((line) => !ADMIN_LINE.test(line))
    .map((line) => (KEY_LINE.test(line) ? `export KEY='${key}'` : line))
    .join('\n');
  assert.ok(script.includes(README_BASE_URL), 'the commands name the API as npm start serves it');

  const binDir = path.join(workDir, 'bin');
  const logDir = path.join(workDir, 'calls');
  for (const dir of [binDir, logDir]) mkdirSync(dir);
  curlRecorder(binDir, logDir);
  const run = await runProcess(
    'bash',
    // -e: a command that fails stops the run (a terminal would go on, and the answers show it).
    ['-eu', '-c', script.replaceAll(README_BASE_URL, stack.api.url)],
    {
      cwd: workDir,
      // This Node (the project's 24) for `node -p`, after the recording curl.
      env: { ...process.env, PATH: [binDir, path.dirname(process.execPath), process.env.PATH].join(':') },
    },
  );
  const calls = recordedCalls(logDir);
  const log = calls
    .map(
      (c) => `${c.status} ${c.args.filter((a) => a.startsWith('http')).join(' ')}\n  ${c.body.slice(0, 300)}`,
    )
    .join('\n');
  assert.equal(run.code, 0, `${run.stderr}\n${log}`);
  for (const call of calls) assert.ok(call.status >= 200 && call.status < 300, log);

  const answer = (method: string, pattern: RegExp) => {
    const found = calls.filter((c) => {
      const url = c.args.find((a) => a.startsWith('http')) ?? '';
      const sent = c.args.includes('-X')
        ? c.args[c.args.indexOf('-X') + 1]
        : c.args.includes('-d')
          ? 'POST'
          : 'GET';
      return sent === method && pattern.test(new URL(url).pathname);
    });
    assert.ok(found.length > 0, `no ${method} ${pattern}:\n${log}`);
    return { ...found.at(-1)!, json: JSON.parse(found.at(-1)!.body) };
  };
  const uuid = '[0-9a-f-]{36}';

  assert.equal(answer('GET', /^\/v1\/me$/).status, 200);
  const agent = answer('POST', /^\/v1\/agents$/);
  assert.equal(agent.status, 201);
  const published = answer('POST', new RegExp(`^/v1/agents/${uuid}/publish$`));
  assert.equal(published.json.id, agent.json.id);
  assert.equal(published.json.status, 'published');
  const assigned = answer('PATCH', new RegExp(`^/v1/phone-numbers/${uuid}$`));
  assert.equal(assigned.json.agent_id, agent.json.id);
  const placed = answer('POST', /^\/v1\/calls$/);
  assert.equal(placed.status, 202);
  assert.equal(placed.json.status, 'queued');
  assert.equal(placed.json.from, assigned.json.number, 'the call goes out from the number assigned');

  const call = answer('GET', new RegExp(`^/v1/calls/${uuid}$`)).json;
  assert.equal(call.id, placed.json.id);
  assert.equal(call.status, 'completed');
  assert.equal(call.analysis.outcome, 'resolved');
  const transcript = answer('GET', new RegExp(`^/v1/calls/${uuid}/transcript$`)).json;
  assert.equal(transcript.call_id, call.id);
  assert.ok(transcript.data.length >= 4, 'both sides spoke');
  assert.match(transcript.data[0].text, /Hi, this is Acme support/);

  // Each POST that takes one sent a key of its own.
  const keys = calls
    .flatMap((c) => c.args.filter((a) => a.startsWith('Idempotency-Key: ')))
    .map((h) => h.slice('Idempotency-Key: '.length));
  assert.equal(keys.length, 2);
  assert.equal(new Set(keys).size, keys.length);
});
