import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_BUFFERED_BYTES, type SendingSocket, sendBounded } from '../media/bounded-send.js';

// A Media Streams client that does not read its audio: past the bound the gateway cuts it off
// instead of holding what piles up (the socket's own buffer, on a real connection, only grows
// once the kernel's buffers are full, which paced audio takes minutes to do).

function socket(bufferedAmount: number, readyState = 1) {
  const sent: string[] = [];
  let terminated = false;
  const fake: SendingSocket = {
    readyState,
    OPEN: 1,
    bufferedAmount,
    send: ((text: string) => sent.push(text)) as SendingSocket['send'],
    terminate: () => {
      terminated = true;
    },
  } as SendingSocket;
  return { fake, sent, terminated: () => terminated };
}

test('a client that reads gets every message', () => {
  const s = socket(10_000);
  assert.equal(sendBounded(s.fake, 'a'), true);
  assert.deepEqual(s.sent, ['a']);
  assert.equal(s.terminated(), false);
});

test('a client that leaves more than the bound unread is cut off, and sent nothing more', () => {
  const s = socket(MAX_BUFFERED_BYTES + 1);
  assert.equal(sendBounded(s.fake, 'a'), false);
  assert.deepEqual(s.sent, []);
  assert.equal(s.terminated(), true);
});

test('a closed socket is sent nothing', () => {
  const s = socket(0, 3);
  assert.equal(sendBounded(s.fake, 'a'), false);
  assert.deepEqual(s.sent, []);
});
