import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { test } from 'node:test';
import { freePort } from '../scripts/processes.js';

// scripts/processes.ts freePort: a port for a server started right after, which no outgoing
// connection can take meanwhile (it is below the kernel's range for their local ports).

const outgoingStart = Number(
  readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
);

test('a free port below the outgoing connections’ range, that a server can listen on', async () => {
  const ports = await Promise.all(Array.from({ length: 10 }, () => freePort()));
  for (const port of ports) {
    assert.ok(port >= 20_000 && port < outgoingStart, `${port} is below ${outgoingStart}`);
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  }
});
