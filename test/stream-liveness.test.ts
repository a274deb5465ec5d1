import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, mock, test } from 'node:test';
import { watchLiveness } from '../media/stream-liveness.js';

// Whether a Media Streams client is still there (media/stream-liveness.ts), on a clock the test
// drives: pings every 5 s with the next one checking the answer, and no media for the idle window
// once the call is taken.

class FakeSocket extends EventEmitter {
  pings = 0;
  terminated = false;
  /** Answers each ping, as a live client's WebSocket stack does. */
  answers = true;
  ping() {
    this.pings++;
    if (this.answers) queueMicrotask(() => this.emit('pong'));
  }
  terminate() {
    this.terminated = true;
  }
}

beforeEach(() => mock.timers.enable({ apis: ['setInterval', 'setTimeout', 'Date'] }));
afterEach(() => mock.timers.reset());

test('a socket that answers its pings stays; one that stops answering is ended at the next ping', async () => {
  const socket = new FakeSocket();
  const liveness = watchLiveness(socket, { idleTimeoutMs: 10_000, onIdle: () => assert.fail('not idle') });
  for (let i = 0; i < 4; i++) {
    mock.timers.tick(5_000);
    await Promise.resolve();
  }
  assert.equal(socket.pings, 4);
  assert.equal(socket.terminated, false);
  socket.answers = false; // a dropped NAT mapping: nothing comes back
  mock.timers.tick(5_000);
  assert.equal(socket.terminated, false, 'one unanswered ping is not yet a verdict');
  mock.timers.tick(5_000);
  assert.equal(socket.terminated, true, 'the next ping finds the last one unanswered');
  liveness.stop();
});

test('once the call is taken, no media for the idle window is the caller gone; frames keep it open', () => {
  const socket = new FakeSocket();
  let idle = 0;
  const liveness = watchLiveness(socket, {
    idleTimeoutMs: 10_000,
    pingEveryMs: 60_000,
    onIdle: () => idle++,
  });
  // Before the call is taken no media is expected.
  mock.timers.tick(30_000);
  assert.equal(idle, 0);
  liveness.expectMedia();
  for (let ms = 0; ms < 25_000; ms += 20) {
    liveness.heard();
    mock.timers.tick(20);
  }
  assert.equal(idle, 0, '25 s of frames');
  mock.timers.tick(9_900);
  assert.equal(idle, 0, 'not yet 10 s since the last frame');
  mock.timers.tick(200);
  assert.equal(idle, 1, '10 s without a frame');
  liveness.stop();
});

test('stop ends both watches', () => {
  const socket = new FakeSocket();
  let idle = 0;
  const liveness = watchLiveness(socket, { idleTimeoutMs: 1_000, onIdle: () => idle++ });
  liveness.expectMedia();
  liveness.stop();
  mock.timers.tick(60_000);
  assert.equal(idle, 0);
  assert.equal(socket.pings, 0);
});
