import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { reportTimings, slowestFirst } from '../scripts/test-timings.js';
import type { TimingLine } from './support/file-timings-reporter.js';

// What `npm test` prints after the runner (scripts/test-timings.ts), from the lines its reporter
// writes (test/support/file-timings-reporter.ts): the slowest files, the files that did not pass
// with why, and the closing count CI reads; and the order the next run starts its files in.

const dir = mkdtempSync(path.join(tmpdir(), 'test-timings-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string) => path.resolve(`test/${name}.test.ts`);
const counts = (name: string, passed: number, failed = 0, cancelled = 0, skipped = 0): TimingLine => ({
  kind: 'counts',
  file: file(name),
  passed,
  failed,
  cancelled,
  skipped,
  todo: 0,
});

function report(
  lines: TimingLine[],
  stoppedByGuardAfterMs: number | null = null,
  cpu: { file: string; cpuMs: number }[] = [],
  totalCpuMs?: number,
) {
  const timings = path.join(dir, `run-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(timings, lines.map((line) => JSON.stringify(line)).join('\n'));
  const cpuPath = `${timings}.cpu`;
  writeFileSync(cpuPath, cpu.map((line) => `${JSON.stringify(line)}\n`).join(''));
  const printed: string[] = [];
  const keptPath = path.join(dir, 'kept.json');
  const closing = reportTimings(timings, {
    stoppedByGuardAfterMs,
    write: (l) => printed.push(l),
    keptPath,
    cpuPath,
    totalCpuMs,
  });
  return { closing, printed, kept: JSON.parse(readFileSync(keptPath, 'utf8')) as Record<string, number> };
}

test('a run that passes: the slowest files first, the count line, and every duration kept', () => {
  const { closing, printed, kept } = report([
    { kind: 'queued', file: file('a') },
    { kind: 'queued', file: file('b') },
    counts('a', 3, 0, 0, 1),
    { kind: 'ended', file: file('a'), durationMs: 2_000, testsMs: 1_500 },
    counts('b', 5),
    { kind: 'ended', file: file('b'), durationMs: 90_000, testsMs: 65_000 },
  ]);
  assert.equal(closing, '8 passed, 0 failed, 1 skipped');
  assert.deepEqual(printed, [
    '[npm test] the 2 slowest files:',
    '[npm test]      file  in tests       cpu',
    '[npm test]     1m30s     1m05s         -  test/b.test.ts',
    '[npm test]      2.0s      1.5s         -  test/a.test.ts',
    // 25 s outside its tests: named, as a handle left open would make it.
    '[npm test] files long outside their tests (loading, hooks, exiting; a handle left open?):',
    '[npm test]     25.0s  test/b.test.ts',
  ]);
  assert.deepEqual(kept, { 'test/b.test.ts': 90_000, 'test/a.test.ts': 2_000 });
});

test('the CPU each file noted as it exited: beside its time, and the costliest files with the total', () => {
  const { printed } = report(
    [
      counts('a', 1),
      { kind: 'ended', file: file('a'), durationMs: 40_000, testsMs: 39_000 },
      counts('b', 1),
      { kind: 'ended', file: file('b'), durationMs: 20_000, testsMs: 19_000 },
      counts('c', 1),
      { kind: 'ended', file: file('c'), durationMs: 1_000, testsMs: 900 },
    ],
    null,
    // a mostly waits; b spends its time on the cores; c exited without noting it.
    [
      { file: file('a'), cpuMs: 3_000 },
      { file: file('b'), cpuMs: 35_500 },
    ],
    // The shared parts (PostgreSQL, Temporal, the speech server) and the runner: the rest.
    100_000,
  );
  assert.deepEqual(printed, [
    '[npm test] the 3 slowest files:',
    '[npm test]      file  in tests       cpu',
    '[npm test]     40.0s     39.0s      3.0s  test/a.test.ts',
    '[npm test]     20.0s     19.0s     35.5s  test/b.test.ts',
    '[npm test]      1.0s      0.9s         -  test/c.test.ts',
    "[npm test] CPU: 1m40s in all, of it 38.5s in the files' processes; the most:",
    '[npm test]     35.5s  test/b.test.ts',
    '[npm test]      3.0s  test/a.test.ts',
  ]);
});

test('a run the guard stopped: failed, interrupted and never-started files each say why, and count as failed', () => {
  const { closing, printed } = report(
    [
      { kind: 'queued', file: file('a') },
      { kind: 'queued', file: file('b') },
      { kind: 'queued', file: file('c') },
      { kind: 'queued', file: file('d') },
      counts('a', 2, 1),
      { kind: 'ended', file: file('a'), durationMs: 5_000, testsMs: 4_000, error: '1 subtest failed' },
      counts('b', 1, 0, 2),
      { kind: 'interrupted', file: file('b') },
      { kind: 'ended', file: file('b'), durationMs: 60_000, testsMs: 55_000 },
      { kind: 'interrupted', file: file('c') },
    ],
    18 * 60_000,
  );
  // a: 1 failed test; b: 2 cancelled; c: interrupted before it reported (1); d: never started (1).
  assert.equal(closing, '3 passed, 5 failed');
  assert.ok(printed.includes('[npm test] the guard stopped the run after 18m00s (TEST_RUN_TIMEOUT_MS)'));
  const why = printed.slice(printed.indexOf('[npm test] 4 file(s) did not pass:') + 1);
  assert.deepEqual(why, [
    '[npm test]   test/a.test.ts: 1 test(s) failed or were cancelled (1 subtest failed)',
    '[npm test]   test/b.test.ts: interrupted: the run was stopped while it ran',
    '[npm test]   test/c.test.ts: interrupted: the run was stopped while it ran',
    '[npm test]   test/d.test.ts: never started: the run was stopped before it',
  ]);
});

test('the next run starts the slowest files first: this machine’s durations over the committed ones, unknown files last in their order', () => {
  const keptPath = path.join(dir, 'order-kept.json');
  const committedPath = path.join(dir, 'order-committed.json');
  writeFileSync(committedPath, JSON.stringify({ 'test/a.test.ts': 1_000, 'test/b.test.ts': 50_000 }));
  writeFileSync(keptPath, JSON.stringify({ 'test/a.test.ts': 70_000 }));
  const files = ['test/x.test.ts', 'test/b.test.ts', 'test/y.test.ts', 'test/a.test.ts'];
  assert.deepEqual(slowestFirst(files, { keptPath, committedPath }), [
    'test/a.test.ts',
    'test/b.test.ts',
    'test/x.test.ts',
    'test/y.test.ts',
  ]);
});
