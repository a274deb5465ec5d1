import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { freePort } from '../scripts/processes.js';
import { createFixture } from './support/api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

// api/main.ts as its own process: settings from the environment, JSON logs, the warning about
// private webhook targets, and a clean stop on SIGTERM.

let db: TestDatabase;
before(async () => {
  db = await freshDatabase();
});
after(async () => {
  await db?.close();
});

function collectLines(child: ChildProcess) {
  const lines: Record<string, unknown>[] = [];
  let buffer = '';
  child.stdout!.on('data', (chunk) => {
    buffer += chunk;
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      lines.push(JSON.parse(buffer.slice(0, newline)));
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
    }
  });
  return lines;
}

async function waitFor<T>(find: () => T | undefined, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const found = find();
    if (found) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('timed out');
}

test('the API process serves on PORT, logs JSON, warns about private targets and stops on SIGTERM', async () => {
  const port = await freePort();
  const f = await createFixture(db.orm);
  const child = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: db.url,
      LOG_LEVEL: 'info',
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = collectLines(child);
  try {
    await waitFor(() => lines.find((l) => l.msg === 'API listening'));
    const warning = lines.find(
      (l) => l.level === 'warn' && String(l.msg).includes('WEBHOOKS_ALLOW_PRIVATE_TARGETS'),
    );
    assert.ok(warning, 'warns at start');

    const res = await fetch(`http://127.0.0.1:${port}/v1/me`, {
      headers: { authorization: `Bearer ${f.secret}` },
    });
    assert.equal(res.status, 200);
    const requestId = res.headers.get('x-request-id');
    const line = await waitFor(() => lines.find((l) => l.msg === 'request' && l.request_id === requestId));
    assert.equal(line.status, 200);
    assert.ok(!JSON.stringify(lines).includes(f.secret));

    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.ok(lines.some((l) => l.msg === 'API stopped'));
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});
