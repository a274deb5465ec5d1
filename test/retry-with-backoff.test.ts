import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retryWithBackoff } from '../lib/retry-with-backoff.js';

// The in-process retry of the media gateway's turns and signals (lib/retry-with-backoff.ts).

/** A step that fails `failures` times, then answers 'done'. */
function failing(failures: number) {
  const attempts: number[] = [];
  return {
    attempts,
    step: async (attempt: number) => {
      attempts.push(attempt);
      if (attempts.length <= failures) throw new Error(`failure ${attempts.length}`);
      return 'done';
    },
  };
}

test('waits double from the first to the ceiling, and what waitAfter asks for is waited', async () => {
  const { step, attempts } = failing(5);
  const waits: number[] = [];
  const retried: number[] = [];
  const answer = await retryWithBackoff(step, {
    firstMs: 100,
    maxMs: 500,
    budgetMs: 60_000,
    waitAfter: (_error, backoffMs) => (attempts.length === 4 ? 700 : backoffMs),
    onRetry: (_error, attempt) => retried.push(attempt),
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  assert.equal(answer, 'done');
  assert.deepEqual(attempts, [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(waits, [100, 200, 400, 700, 500]);
  assert.deepEqual(retried, [1, 2, 3, 4, 5]);
});

test('gives up at once when waitAfter says so: the error is the step’s', async () => {
  const { step, attempts } = failing(3);
  await assert.rejects(
    retryWithBackoff(step, {
      firstMs: 100,
      maxMs: 500,
      budgetMs: 60_000,
      waitAfter: () => null,
      sleep: async () => {},
    }),
    /failure 1/,
  );
  assert.deepEqual(attempts, [1]);
});

test('gives up with the last error when the next wait would pass the budget', async () => {
  const { step, attempts } = failing(10);
  await assert.rejects(
    retryWithBackoff(step, {
      firstMs: 400,
      maxMs: 5_000,
      budgetMs: 1_000,
      waitAfter: (_error, backoffMs) => backoffMs,
      sleep: async () => {},
    }),
    /failure 3/,
  );
  // No time passes while these waits are skipped: a wait of 400 ms, then one of 800 ms, each fits
  // in the 1 s budget; one of 1600 ms would not.
  assert.deepEqual(attempts, [1, 2, 3]);
});
