import assert from 'node:assert/strict';
import { readFileSync, utimesSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { freePort, PORT_RESERVATIONS_DIR, PORT_RESERVED_MS, reservePort } from '../scripts/processes.js';

// scripts/processes.ts freePort: a port for a server started right after, which no outgoing
// connection can take meanwhile (it is below the kernel's range for their local ports), and no
// other process choosing a port either (it is reserved for a while: reservePort).

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

test('a port freePort chose is reserved: no other chooser takes it until the reservation is stale', async () => {
  const port = await freePort();
  assert.equal(reservePort(port), false, 'freePort reserved the port it chose');
  const file = path.join(PORT_RESERVATIONS_DIR, String(port));
  const stale = new Date(Date.now() - PORT_RESERVED_MS - 1_000);
  utimesSync(file, stale, stale);
  assert.equal(reservePort(port), true, 'a stale reservation is taken over');
  assert.equal(reservePort(port), false, 'and is fresh again');
});
