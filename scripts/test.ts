import { spawn } from 'node:child_process';
import { existsSync, globSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { cpuMsWithReapedChildren } from './cpu-time.js';
import { formatDuration, isAlive } from './processes.js';
import { cacheRoot } from './temporal-binaries.js';
import { startSharedParts } from './test-shared-parts.js';
import { reportTimings, slowestFirst } from './test-timings.js';

// `npm test [-- files...]`: the parts every test file shares started once (scripts/test-shared-parts.ts:
// a throw-away PostgreSQL with a migrated template database, a headless in-memory Temporal dev
// server, the time-skipping test server, the workflow bundles, the SIP side, the local speech
// server when a file needs it), then node's test runner over test/**/*.test.ts, the slowest files
// first, with their addresses in the environment.
// TEST_TEMPORAL_ADDRESS (and TEST_TEMPORAL_NAMESPACE, default `default`) given by the caller names
// an existing Temporal instead of the dev server: `npm run start:cluster`'s real server, to run the
// API tests against it (README "Production"). Its search attributes must be registered, as
// start:cluster does.
// After the runner: the slowest files, the files that did not pass (scripts/test-timings.ts), and
// as the last line the plain count CI reads ("N passed, N failed"); it exits with the runner's code.

const PER_TEST_TIMEOUT_MS = 120_000;
/** CI allows 20 minutes; past this the runner is interrupted so it still prints its summary. */
const WHOLE_RUN_TIMEOUT_MS = Number(process.env.TEST_RUN_TIMEOUT_MS || 18 * 60_000);
/**
 * Test files run three at a time (TEST_CONCURRENCY): many of them spend much of their time waiting
 * (calls in real time, audio played at its own pace, a server's timers), so a third file keeps the
 * two cores busy (measured: docs/development.md, "Where the time goes").
 */
const TEST_CONCURRENCY = Number(process.env.TEST_CONCURRENCY || 3);
const DEFAULT_PATTERN = 'test/**/*.test.ts';
/**
 * Loaded into every test file's process: tsx, and the watch that ends a file lingering after its
 * tests (test/support/exit-when-done.ts), both in the main thread only (not in Temporal's workflow threads).
 */
const TEST_FILE_PRELOAD = path.resolve('test/support/test-file-preload.mjs');

/** Writes a JSON line per finished file (test/support/file-timings-reporter.ts), read at the end. */
const TIMINGS_REPORTER = path.resolve('test/support/file-timings-reporter.ts');

const runsDir = path.resolve('.data/test-runs');
const runDir = path.join(runsDir, String(process.pid));
const timingsPath = path.join(runDir, 'file-timings.jsonl');
/** Each file's CPU time, noted by the file's own process as it exits (test/support/exit-when-done.ts). */
const cpuPath = path.join(runDir, 'file-cpu.jsonl');

function progress(line: string): void {
  process.stdout.write(`[npm test] ${line}\n`);
}

/** Folders of earlier runs whose process is gone (killed runs leave them behind). */
function removeAbandonedRuns(): void {
  if (!existsSync(runsDir)) return;
  for (const name of readdirSync(runsDir)) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) continue;
    rmSync(path.join(runsDir, name), { recursive: true, force: true });
  }
}

const givenTemporal = process.env.TEST_TEMPORAL_ADDRESS
  ? {
      address: process.env.TEST_TEMPORAL_ADDRESS,
      namespace: process.env.TEST_TEMPORAL_NAMESPACE || 'default',
    }
  : undefined;

async function main(): Promise<number> {
  const started = Date.now();
  removeAbandonedRuns();
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(runDir, { recursive: true });

  const cleanups: (() => Promise<void>)[] = [];
  let stopped = false;
  const stopSharedParts = async () => {
    if (stopped) return;
    stopped = true;
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  };
  const cleanUp = async () => {
    await stopSharedParts();
    rmSync(runDir, { recursive: true, force: true });
  };

  let runner: ReturnType<typeof spawn> | undefined;
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted = true;
    // The runner shares our terminal (and so usually got the signal too); make sure it stops.
    runner?.kill(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    // Files or patterns (`npm test -- 'test/api-*.test.ts'`), as node's runner takes them.
    const patterns = process.argv.slice(2);
    const given = patterns.flatMap((pattern) => globSync(pattern).sort());
    if (patterns.length > 0 && given.length === 0)
      throw new Error(`no test file matches ${patterns.join(' ')}`);
    const files = slowestFirst(given.length > 0 ? given : globSync(DEFAULT_PATTERN).sort());
    progress('starting PostgreSQL, Temporal and the other shared parts...');
    const parts = await startSharedParts({ runDir, files, givenTemporal, log: progress });
    cleanups.push(...parts.cleanups);
    if (interrupted) {
      await cleanUp();
      return 130;
    }

    const args = [
      // A file whose tests are done but which leaves a handle open (a server, a timer) would
      // otherwise keep the whole run waiting forever; the preload ends it a while after its tests
      // (not --test-force-exit, which dropped tests of a file from the report).
      '--import',
      TEST_FILE_PRELOAD,
      '--test',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      `--test-reporter=${TIMINGS_REPORTER}`,
      `--test-reporter-destination=${timingsPath}`,
      `--test-concurrency=${TEST_CONCURRENCY}`,
      `--test-timeout=${PER_TEST_TIMEOUT_MS}`,
      // TEST_NAME_PATTERN: only the tests whose names match, as node's --test-name-pattern.
      ...(process.env.TEST_NAME_PATTERN ? [`--test-name-pattern=${process.env.TEST_NAME_PATTERN}`] : []),
      ...files,
    ];
    for (const line of parts.described) progress(line);
    progress(`ready after ${formatDuration(Date.now() - started)}; running ${files.length} file(s)`);

    runner = spawn(process.execPath, args, {
      stdio: 'inherit',
      env: {
        ...process.env,
        ...parts.env,
        TEST_CPU_LOG: cpuPath,
        // The clusters tests start share the cores with the other files running at once: run at
        // the priority of everything else there, as before CLUSTER_BACKGROUND_NICE.
        CLUSTER_BACKGROUND_NICE: process.env.CLUSTER_BACKGROUND_NICE ?? '0',
        // V8's code cache for the modules every file and its processes load again (the SDKs, the
        // ORM): measured about 0.2 s of CPU less per process.
        NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE || path.join(cacheRoot(), 'node-compile-cache'),
      },
    });
    const child = runner;
    // Hooks have no timeout of their own: a hung `before` would hold the run past CI's limit.
    let guardFired = false;
    const watchdog = setTimeout(() => {
      guardFired = true;
      child.kill('SIGINT');
      setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
    }, WHOLE_RUN_TIMEOUT_MS);
    const code = await new Promise<number>((resolve) => {
      child.once('error', () => resolve(1));
      child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 128 : 1)));
    });
    clearTimeout(watchdog);
    await stopSharedParts();
    const closing = reportTimings(timingsPath, {
      stoppedByGuardAfterMs: guardFired ? WHOLE_RUN_TIMEOUT_MS : null,
      cpuPath,
      // Everything the run started, the shared parts and the runner included, is reaped by now.
      totalCpuMs: cpuMsWithReapedChildren(),
    });
    rmSync(runDir, { recursive: true, force: true });
    process.stdout.write(`${closing}\n`);
    return interrupted ? 130 : code;
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`[npm test] ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
