import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

// The production entries (api/main.ts, workers/main.ts) never start a PostgreSQL of their own:
// without DATABASE_URL they say so and exit non-zero at once. Only `npm start` embeds one (and
// passes its URL on).

async function runWithoutDatabaseUrl(args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGTERM'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  return { code, output };
}

for (const args of [['api/main.ts'], ['workers/main.ts', 'service']]) {
  test(`${args.join(' ')} without DATABASE_URL exits 1 naming it`, async () => {
    const { code, output } = await runWithoutDatabaseUrl(args);
    assert.equal(code, 1, output);
    const line = output.split('\n').find((text) => text.includes('DATABASE_URL is not set'));
    assert.ok(line, output);
    assert.equal(JSON.parse(line).level, 'error');
  });
}
