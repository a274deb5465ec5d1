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

test('each item’s wait behind the ones before it is told as it starts (a stage’s queue wait metric)', async () => {
  const waits: number[] = [];
  const queue = new SerialQueue({ onWait: (ms) => waits.push(ms) });
  const slow = queue.push(() => new Promise<void>((resolve) => setTimeout(resolve, 60)));
  const next = queue.push(() => 'next');
  assert.equal(waits.length, 0, 'told as it starts, not as it is queued');
  await slow;
  assert.equal(await next, 'next');
  assert.equal(waits.length, 2);
  assert.ok(waits[0]! < 30, `the first waited for nothing: ${waits[0]}`);
  assert.ok(waits[1]! >= 55, `the second waited behind the first: ${waits[1]}`);
});
