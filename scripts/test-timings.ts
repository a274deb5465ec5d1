import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TimingLine } from '../test/support/file-timings-reporter.js';
import { formatDuration } from './processes.js';

// What `npm test` prints after node's runner (from test/support/file-timings-reporter.ts's lines):
// the slowest files; the files that did not pass, one line each with why (a failed test, or, when
// the guard stopped the run, interrupted or never started); and as the very last line the plain
// count CI reads, "N passed, N failed[, N skipped]", where cancelled tests count as failed and so
// does each file that was interrupted or never ran. Every file's duration is kept in
// .data/test-timings.json: the next run starts the slowest files first (scripts/test.ts); a clone
// that has run nothing yet takes the order from test/file-durations.json, a committed measurement.

const SLOWEST_SHOWN = 10;
/**
 * A file that spends this long outside its tests (loading, hooks, exiting) is named: a handle left
 * open (a timer, a socket) keeps its process, and one of the run's slots, until it goes.
 */
const OUTSIDE_TESTS_NAMED_MS = 20_000;
export const KEPT_TIMINGS = path.resolve('.data/test-timings.json');
const COMMITTED_TIMINGS = path.resolve('test/file-durations.json');

function readDurations(file: string): Record<string, number> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

interface FileReport {
  file: string;
  durationMs: number | null;
  /** Of it, the time in its top-level tests; the rest is loading, before/after hooks and exiting. */
  testsMs: number;
  counts: Extract<TimingLine, { kind: 'counts' }> | null;
  error: string | null;
  interrupted: boolean;
  /** CPU time of the file's process and the children it reaped, when it noted it on exit. */
  cpuMs: number | null;
}

function readReports(timingsPath: string, cpuPath: string | undefined): FileReport[] {
  const files = new Map<string, FileReport>();
  const of = (file: string) => {
    let report = files.get(file);
    if (!report) {
      report = {
        file,
        durationMs: null,
        testsMs: 0,
        counts: null,
        error: null,
        interrupted: false,
        cpuMs: null,
      };
      files.set(file, report);
    }
    return report;
  };
  const text = existsSync(timingsPath) ? readFileSync(timingsPath, 'utf8') : '';
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    const line = JSON.parse(raw) as TimingLine;
    const report = of(line.file);
    if (line.kind === 'counts') report.counts = line;
    else if (line.kind === 'ended') {
      report.durationMs = line.durationMs;
      report.testsMs = line.testsMs;
      report.error = line.error ?? null;
    } else if (line.kind === 'interrupted') report.interrupted = true;
  }
  const cpuText = cpuPath && existsSync(cpuPath) ? readFileSync(cpuPath, 'utf8') : '';
  for (const raw of cpuText.split('\n')) {
    if (!raw.trim()) continue;
    const { file, cpuMs } = JSON.parse(raw) as { file: string; cpuMs: number };
    // The runner names files as given; the file's process, as it resolved them.
    const report =
      files.get(file) ?? [...files.values()].find((r) => path.resolve(r.file) === path.resolve(file));
    if (report) report.cpuMs = cpuMs;
  }
  return [...files.values()];
}

/** Why a file did not pass, or null when it did. */
function notPassed(report: FileReport): string | null {
  if (report.interrupted) return 'interrupted: the run was stopped while it ran';
  if (report.durationMs === null) return 'never started: the run was stopped before it';
  const failed = (report.counts?.failed ?? 0) + (report.counts?.cancelled ?? 0);
  if (failed > 0)
    return `${failed} test(s) failed or were cancelled${report.error ? ` (${report.error})` : ''}`;
  return report.error;
}

/** Prints the report; returns the closing count line. */
export function reportTimings(
  timingsPath: string,
  options: {
    stoppedByGuardAfterMs: number | null;
    write?: (line: string) => void;
    keptPath?: string;
    /** Lines `{"file", "cpuMs"}` (test/support/exit-when-done.ts). */
    cpuPath?: string;
    /** The whole run's CPU time: the files, the runner and the shared parts. */
    totalCpuMs?: number;
  },
): string {
  const keptPath = options.keptPath ?? KEPT_TIMINGS;
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const reports = readReports(timingsPath, options.cpuPath);
  const relative = (file: string) => path.relative(process.cwd(), file);
  const timed = reports.filter((r) => r.durationMs !== null) as (FileReport & { durationMs: number })[];
  const slowest = [...timed].sort((a, b) => b.durationMs - a.durationMs).slice(0, SLOWEST_SHOWN);
  if (slowest.length > 0) {
    write(`[npm test] the ${slowest.length} slowest files:`);
    write('[npm test]      file  in tests       cpu');
    for (const r of slowest) {
      const tests = formatDuration(r.testsMs).padStart(8);
      const cpu = (r.cpuMs === null ? '-' : formatDuration(r.cpuMs)).padStart(8);
      write(
        `[npm test]   ${formatDuration(r.durationMs).padStart(7)}  ${tests}  ${cpu}  ${relative(r.file)}`,
      );
    }
  }
  const costly = timed.filter((r) => r.cpuMs !== null).sort((a, b) => b.cpuMs! - a.cpuMs!);
  if (costly.length > 0) {
    // The run is mostly CPU-bound: these are the files that take the cores from the others.
    const inFiles = costly.reduce((sum, r) => sum + r.cpuMs!, 0);
    const whole =
      options.totalCpuMs === undefined ? '' : `${formatDuration(options.totalCpuMs)} in all, of it `;
    write(`[npm test] CPU: ${whole}${formatDuration(inFiles)} in the files' processes; the most:`);
    for (const r of costly.slice(0, SLOWEST_SHOWN))
      write(`[npm test]   ${formatDuration(r.cpuMs!).padStart(7)}  ${relative(r.file)}`);
  }
  const outside = timed.filter((r) => r.durationMs - r.testsMs >= OUTSIDE_TESTS_NAMED_MS);
  if (outside.length > 0) {
    write(`[npm test] files long outside their tests (loading, hooks, exiting; a handle left open?):`);
    for (const r of outside.sort((a, b) => b.durationMs - b.testsMs - (a.durationMs - a.testsMs)))
      write(`[npm test]   ${formatDuration(r.durationMs - r.testsMs).padStart(7)}  ${relative(r.file)}`);
  }
  if (options.stoppedByGuardAfterMs !== null)
    write(
      `[npm test] the guard stopped the run after ${formatDuration(options.stoppedByGuardAfterMs)} (TEST_RUN_TIMEOUT_MS)`,
    );
  const failing = reports.flatMap((r) => {
    const why = notPassed(r);
    return why ? [{ file: r.file, why }] : [];
  });
  if (failing.length > 0) {
    write(`[npm test] ${failing.length} file(s) did not pass:`);
    for (const { file, why } of failing) write(`[npm test]   ${relative(file)}: ${why}`);
  }
  if (timed.length > 0) {
    mkdirSync(path.dirname(keptPath), { recursive: true });
    // Merged into what earlier runs measured: a run of some files keeps the others' durations.
    const durations = { ...readDurations(keptPath) };
    for (const r of timed) durations[relative(r.file)] = r.durationMs;
    const sorted = Object.entries(durations).sort(([, a], [, b]) => b - a);
    writeFileSync(keptPath, `${JSON.stringify(Object.fromEntries(sorted), null, 2)}\n`);
  }
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const r of reports) {
    passed += r.counts?.passed ?? 0;
    skipped += (r.counts?.skipped ?? 0) + (r.counts?.todo ?? 0);
    const failedTests = (r.counts?.failed ?? 0) + (r.counts?.cancelled ?? 0);
    // A file that failed, or did not finish, without a failed test to show for it counts as one.
    failed += failedTests > 0 ? failedTests : notPassed(r) ? 1 : 0;
  }
  return `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`;
}

/**
 * The files in the order to start them: the slowest first (by the runs here, else by the committed
 * measurement; this machine's runs win), then the rest as given. With a few files at a time on two cores, a long file
 * started last would run on alone at the end.
 */
export function slowestFirst(
  files: string[],
  { keptPath = KEPT_TIMINGS, committedPath = COMMITTED_TIMINGS } = {},
): string[] {
  const durations = { ...readDurations(committedPath), ...readDurations(keptPath) };
  const known = (file: string) => durations[path.relative(process.cwd(), path.resolve(file))] ?? -1;
  return files
    .map((file, order) => ({ file, order, ms: known(file) }))
    .sort((a, b) => b.ms - a.ms || a.order - b.order)
    .map((entry) => entry.file);
}
