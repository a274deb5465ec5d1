import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { reachable } from '../lib/health/reachable.js';
import { freePort } from '../scripts/processes.js';

// The media gateway's speech readiness: its endpoints accept connections, or it is not ready.

test('ok while every endpoint accepts connections; unavailable once one is gone', async () => {
  const server = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const stt = `http://127.0.0.1:${port}/v1`;
  try {
    assert.equal(await reachable([stt, `${stt}/`]), 'ok');
    const gone = `http://127.0.0.1:${await freePort()}/v1`;
    assert.equal(await reachable([stt, gone]), 'unavailable');
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  assert.equal(await reachable([stt]), 'unavailable', 'the server stopped');
});
