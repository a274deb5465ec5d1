import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SerialQueue } from '../lib/serial-queue.js';

// The media path's one queue primitive (lib/serial-queue.ts): order, isolation of failures, size, idle.

test('items run one after the other in the order queued, each with its own answer; a failure stops nothing', async () => {
  const queue = new SerialQueue();
  const ran: string[] = [];
  let release!: () => void;
  const first = queue.push(
    () =>
      new Promise<string>((resolve) => {
        ran.push('first started');
        release = () => resolve('one');
      }),
  );
  const second = queue.push(() => {
    ran.push('second');
    throw new Error('the second fails');
  });
  const third = queue.push(async () => {
    ran.push('third');
    return 3;
  });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(ran, ['first started'], 'nothing starts before the one before it settled');
  assert.equal(queue.size, 3);
  release();
  assert.equal(await first, 'one');
  await assert.rejects(second, /the second fails/);
  assert.equal(await third, 3);
  assert.deepEqual(ran, ['first started', 'second', 'third']);
  assert.equal(queue.size, 0);
});

test('idle settles once everything queued so far has, and never rejects', async () => {
  const queue = new SerialQueue();
  let done = false;
  void queue
    .push(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      done = true;
      throw new Error('late failure');
    })
    .catch(() => {});
  await queue.idle();
  assert.equal(done, true);
  await queue.idle(); // an empty queue is idle at once
});
