import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { restartOneAtATime, untilReady } from '../scripts/cluster/rolling-restart.js';
import { loadClusterSettings, mediaGatewayPorts } from '../scripts/cluster/settings.js';
import { type Running, Supervised } from '../scripts/cluster/supervisor.js';

// start:cluster's media gateways (telephony spec section 5): MEDIA_GATEWAYS of them, restarted one
// at a time on SIGUSR2, each stopped with the time its drain needs and ready again before the next.

/** A run of a part that the test ends: `exit()` as the process would, `stop(graceMs)` recorded. */
function fakeRun(stops: (number | undefined)[]): Running & { exit(): void } {
  let exit!: (how: string) => void;
  const exited = new Promise<string>((resolve) => (exit = resolve));
  return {
    pid: 1,
    exited,
    exit: () => exit('exit code 0'),
    stop: async (graceMs) => {
      stops.push(graceMs);
      exit('exit code 0');
    },
  };
}

test('MEDIA_GATEWAYS: one by default, at most 8; the n-th on MEDIA_PORT + 10·n, its control API at the next port', () => {
  assert.equal(loadClusterSettings({}).mediaGateways, 1);
  assert.equal(loadClusterSettings({ MEDIA_GATEWAYS: '3' }).mediaGateways, 3);
  assert.throws(() => loadClusterSettings({ MEDIA_GATEWAYS: '0' }), /MEDIA_GATEWAYS must be a whole number/);
  assert.throws(() => loadClusterSettings({ MEDIA_GATEWAYS: '9' }), /MEDIA_GATEWAYS must be at most 8/);
  assert.deepEqual(
    [0, 1, 2].map((n) => mediaGatewayPorts(8090, n)),
    [
      { port: 8090, controlPort: 8091 },
      { port: 8100, controlPort: 8101 },
      { port: 8110, controlPort: 8111 },
    ],
  );
});

test('a restart on request stops the run with the grace given (its drain) and starts the next at once: no restart of its own, no backoff', async () => {
  const stops: (number | undefined)[] = [];
  const runs: (Running & { exit(): void })[] = [];
  const log: string[] = [];
  const part = new Supervised(
    'media gateway #1',
    async () => {
      const run = fakeRun(stops);
      runs.push(run);
      return run;
    },
    (line) => log.push(line),
  );
  await part.start();
  await part.restart(915_000);
  assert.deepEqual(stops, [915_000]);
  assert.equal(part.starts, 2);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(part.starts, 2, 'its exit was no failure: nothing more was started');
  assert.ok(!log.some((line) => /unexpectedly/.test(line)), log.join('\n'));
  // A run that dies on its own afterwards is still started again by the supervisor.
  runs[1]!.exit();
  await new Promise((resolve) => setTimeout(resolve, 1_300));
  assert.equal(part.starts, 3);
  await part.stop();
});

test('the gateways restart one at a time, each ready again before the next goes; one that does not come back stops the rest', async () => {
  const events: string[] = [];
  const parts = ['#1', '#2', '#3'].map((name) => ({
    name,
    restart: async (graceMs: number) => void events.push(`restart ${name} ${graceMs}`),
  }));
  const done = await restartOneAtATime(parts, {
    graceMs: 915_000,
    ready: async (n) => {
      events.push(`ready? ${parts[n]!.name}`);
      return true;
    },
    log: () => {},
  });
  assert.equal(done, true);
  assert.deepEqual(events, [
    'restart #1 915000',
    'ready? #1',
    'restart #2 915000',
    'ready? #2',
    'restart #3 915000',
    'ready? #3',
  ]);
  events.length = 0;
  const stopped = await restartOneAtATime(parts, {
    graceMs: 1,
    ready: async (n) => n !== 0,
    log: () => {},
  });
  assert.equal(stopped, false);
  assert.deepEqual(events, ['restart #1 1'], 'the others keep running as they are');
});

test('ready again means /readyz answers 200 (503 while draining or starting)', async () => {
  let answer = 503;
  const server = createServer((_request, response) => response.writeHead(answer).end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/readyz`;
  try {
    assert.equal(await untilReady(url, 300, 50), false);
    setTimeout(() => (answer = 200), 200);
    assert.equal(await untilReady(url, 5_000, 50), true);
    assert.equal(await untilReady('http://127.0.0.1:1/readyz', 300, 50), false, 'nothing listening');
  } finally {
    server.close();
  }
});
