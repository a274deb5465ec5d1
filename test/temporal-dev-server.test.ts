import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../lib/temporal/search-attributes.js';
import { freePort, stopChild, waitForTcp } from '../scripts/processes.js';
import { resolveTemporalCli } from '../scripts/temporal-binaries.js';
import { startTemporalDevServer } from '../scripts/temporal-dev-server.js';
import { type SharedDevServer, sharedDevServer } from './support/temporal.js';

// scripts/temporal-dev-server.ts against real `temporal server start-dev` processes.

let cli: string;
let dir: string;
before(async () => {
  cli = process.env.TEMPORAL_CLI_PATH || (await resolveTemporalCli());
  dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-dev-server-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function customAttributes(address: string): Promise<string[]> {
  const connection = await Connection.connect({ address });
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({
      namespace: 'default',
    });
    return Object.keys(customAttributes ?? {});
  } finally {
    await connection.close();
  }
}

test('a persisted database from before the search attributes gets them at the next start', async () => {
  const dbFilename = path.join(dir, 'old.sqlite');
  // A database written by a plain start-dev, as an older version of this project would have left it.
  const oldPort = await freePort();
  const old = spawn(
    cli,
    [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(oldPort),
      '--headless',
      '--db-filename',
      dbFilename,
    ],
    { stdio: 'ignore' },
  );
  try {
    assert.ok(
      await waitForTcp('127.0.0.1', oldPort, { timeoutMs: 60_000, child: old }),
      'old server started',
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
  } finally {
    await stopChild(old, { signal: 'SIGINT' });
  }

  const server = await startTemporalDevServer({
    cliPath: cli,
    port: await freePort(),
    headless: true,
    dbFilename,
    reuseExisting: false,
  });
  try {
    assert.equal(server.startedHere, true);
    const names = await customAttributes(server.address);
    for (const name of Object.keys(SEARCH_ATTRIBUTES)) assert.ok(names.includes(name), `${name} in ${names}`);
  } finally {
    await server.stop();
  }
  await server.exited;
});

test('a Temporal server already answering on the address is reused and left running', async () => {
  const shared: SharedDevServer = await sharedDevServer();
  try {
    const [ip, port] = shared.address.split(':');
    const reused = await startTemporalDevServer({ cliPath: cli, ip, port: Number(port), headless: true });
    assert.equal(reused.startedHere, false);
    assert.equal(reused.address, shared.address);
    await reused.stop();
    assert.ok((await customAttributes(shared.address)).includes('WorkspaceId'), 'still serving');
  } finally {
    await shared.close();
  }
});

test('a port held by something that is not Temporal is refused with a clear error', async () => {
  const blocker = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const { port } = blocker.address() as net.AddressInfo;
  try {
    await assert.rejects(
      startTemporalDevServer({ cliPath: cli, port, headless: true }),
      /does not answer as a Temporal server/,
    );
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
  }
});
