import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { sendWebhook } from '../lib/webhooks/sender.js';

// The spec gives a receiver 10 seconds to answer. This checks the sender's default against a
// local receiver that reads the request and never answers: the attempt fails after 10 s.

let silent: Server;
let url: string;
before(async () => {
  silent = createServer((req) => req.resume());
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hooks`;
});
after(async () => {
  silent.closeAllConnections();
  await new Promise((resolve) => silent.close(resolve));
});

test('a receiver that does not answer within 10 seconds fails the attempt', async () => {
  const startedAt = Date.now();
  const result = await sendWebhook({
    url,
    body: Buffer.from('{"id":"evt_0"}'),
    headers: { 'Content-Type': 'application/json' },
    allowPrivate: true,
  });
  const waitedMs = Date.now() - startedAt;
  assert.equal(result.delivered, false);
  assert.equal(result.responseStatus, null);
  assert.equal(result.error, 'no answer within 10 s');
  // A timer may fire a millisecond early from rounding; 9.9 s still shows it waited the 10 s.
  assert.ok(waitedMs >= 9_900, `gave up after ${waitedMs} ms, before the receiver's 10 s were over`);
});
