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

test("a success keeps the start of the answer's body for the delivery log, without waiting for its end", async () => {
  const chatty = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/empty') return void res.writeHead(204).end();
      // 300 characters and then nothing more, the answer left open: the start is enough.
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write(`  ${'x'.repeat(298)}`);
    });
  });
  await new Promise<void>((resolve) => chatty.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(chatty.address() as AddressInfo).port}`;
  try {
    const send = (path: string) =>
      sendWebhook({
        url: base + path,
        body: Buffer.from('{}'),
        headers: {},
        allowPrivate: true,
        timeoutMs: 5_000,
      });
    const long = await send('/long');
    assert.equal(long.delivered, true);
    assert.equal(long.responseStatus, 200);
    assert.equal(long.error, null);
    assert.equal(long.responseExcerpt, 'x'.repeat(198), 'the first 200 characters, trimmed');
    const empty = await send('/empty');
    assert.equal(empty.delivered, true);
    assert.equal(empty.responseExcerpt, null);
  } finally {
    chatty.closeAllConnections();
    await new Promise<void>((resolve) => chatty.close(() => resolve()));
  }
});
