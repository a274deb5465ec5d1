import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { acceptsTcp, freePort, waitForExit } from '../scripts/processes.js';
import { type SharedDevServer, sharedDevServer } from './support/temporal.js';

// `npm start` as a person runs it: the real script in a child process, with its own data folder,
// free ports for the API and PostgreSQL, and the shared Temporal dev server as TEMPORAL_ADDRESS
// (the default 127.0.0.1:7233 dev server cannot be used while other test runs share the machine).

const ROOT = fileURLToPath(new URL('..', import.meta.url));

let temporal: SharedDevServer;
let dataDir: string;
before(async () => {
  temporal = await sharedDevServer();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'voice-agent-start-'));
  // As root, PostgreSQL runs as the `postgres` user, which must be able to enter the folder.
  chmodSync(dataDir, 0o755);
});
after(async () => {
  await temporal?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startService(env: Record<string, string>): Started {
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** For failures mid-way: an orderly stop first, so the service's PostgreSQL does not outlive the test. */
async function stopService(started: Started): Promise<void> {
  if (started.child.exitCode !== null) return;
  started.child.kill('SIGINT');
  if (!(await waitForExit(started.child, 60_000))) started.child.kill('SIGKILL');
}

async function waitForOutput(started: Started, pattern: RegExp, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(started.output())) {
    if (started.child.exitCode !== null) assert.fail(`npm start exited early:\n${started.output()}`);
    if (Date.now() > deadline) assert.fail(`no ${pattern} within ${timeoutMs} ms:\n${started.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('npm start serves the API, stops everything on SIGINT, and a second start reuses the data', async () => {
  const apiPort = await freePort();
  const pgPort = await freePort();
  const env = {
    PORT: String(apiPort),
    EMBEDDED_PG_PORT: String(pgPort),
    VOICE_AGENT_DATA_DIR: dataDir,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    // Its worker must not take tasks of other test files on the shared server.
    TASK_QUEUE_PREFIX: `start-${randomUUID()}-`,
    DATABASE_URL: '',
  };

  const first = startService(env);
  try {
    await waitForOutput(first, /Press Ctrl-C to stop/, 90_000);
    assert.match(first.output(), new RegExp(`API\\s+http://127\\.0\\.0\\.1:${apiPort}/v1`));
    assert.match(first.output(), /migrations applied/);
    const response = await fetch(`http://127.0.0.1:${apiPort}/v1/openapi.json`);
    assert.equal(response.status, 200);
    assert.equal(await acceptsTcp('127.0.0.1', pgPort), true, 'PostgreSQL runs');

    first.child.kill('SIGINT');
    assert.equal(await first.exited, 0, first.output());
    assert.match(
      first.output(),
      /stopping API[\s\S]*stopping worker[\s\S]*stopping PostgreSQL[\s\S]*stopped/,
    );
    assert.equal(await acceptsTcp('127.0.0.1', apiPort), false, 'the API is stopped');
    assert.equal(await acceptsTcp('127.0.0.1', pgPort), false, 'PostgreSQL is stopped');
  } finally {
    await stopService(first);
  }

  const second = startService(env);
  try {
    await waitForOutput(second, /Press Ctrl-C to stop/, 90_000);
    assert.match(second.output(), /database schema is up to date/);
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0, second.output());
  } finally {
    await stopService(second);
  }
});
