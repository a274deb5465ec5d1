import assert from 'node:assert/strict';
import { Call } from '../../db/entities/index.js';
import type { Orm } from '../../db/orm.js';

// Waits of the audio tests: a process's /health coming up, the Call a stream brought in, and a
// condition of the test's own (audio played, a mark echoed).

/** Polls `url` until it answers 2xx with JSON (at most `limitMs`), and returns that JSON. */
export async function waitForHealth<T = { status: string }>(url: string, limitMs = 120_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const answer = await fetch(url).then(
      (r) => (r.ok ? r.json() : null),
      () => null,
    );
    if (answer) return answer as T;
    if (Date.now() > deadline) assert.fail(`${url} did not answer`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Until `check` holds, every `everyMs`; fails with `what` after `limitMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string | (() => string),
  { limitMs = 20_000, everyMs = 20 }: { limitMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(typeof what === 'string' ? what : what());
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** The call to `number` once it is recorded (a stream's call is taken moments after its `start`). */
export async function callTo(orm: Orm, number: string): Promise<Call> {
  for (let i = 0; i < 100; i++) {
    const call = await orm.em.fork().findOne(Call, { toNumber: number });
    if (call) return call;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`no call to ${number}`);
}

/**
 * `promise`'s value, or `fallback` once `ms` have passed. The timer is cleared either way: a
 * pending timer of a race already won kept a test file's process alive after its tests (a 60 s
 * one held `npm test`'s slot for a minute).
 */
export async function orAfter<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
