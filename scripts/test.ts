import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startLocalPostgres } from '../db/embedded-postgres.js';
import { formatDuration, freePort, isAlive, redactUrl } from './processes.js';
import { resolveTemporalCli, resolveTemporalTestServer } from './temporal-binaries.js';
import { startPrivateTemporalDevServer } from './temporal-dev-server.js';

// `npm test [-- files...]`: a throw-away PostgreSQL and a headless in-memory Temporal dev server on
// free ports, the time-skipping test server resolved (provisioned once per machine), then node's
// test runner over test/**/*.test.ts with their addresses in the environment:
//   TEST_PG_SERVER_URL      the `postgres` database of the test cluster (test/support/database.ts)
//   TEST_TEMPORAL_ADDRESS   the dev server (test/support/temporal.ts sharedDevServer)
//   TEMPORAL_CLI_PATH, TEMPORAL_TEST_SERVER_PATH
// TEST_TEMPORAL_ADDRESS (and TEST_TEMPORAL_NAMESPACE, default `default`) given by the caller names
// an existing Temporal instead of the dev server: `npm run start:cluster`'s real server, to run the
// API tests against it (README "Production"). Its search attributes must be registered, as
// start:cluster does.
// CI reads the runner's closing summary, so this script prints only before the runner starts and
// stays silent from then on; it exits with the runner's code.

const PER_TEST_TIMEOUT_MS = 120_000;
/** CI allows 20 minutes; past this the runner is interrupted so it still prints its summary. */
const WHOLE_RUN_TIMEOUT_MS = Number(process.env.TEST_RUN_TIMEOUT_MS || 18 * 60_000);
/**
 * Test files run three at a time: many of them spend most of their time waiting (calls in real
 * time, audio played at its own pace, a server's timers), so a third file keeps the two cores busy.
 */
const TEST_CONCURRENCY = 3;
const DEFAULT_PATTERN = 'test/**/*.test.ts';
/** Loaded into every test file's process: ends one that lingers after its tests (test/support/exit-when-done.ts). */
const EXIT_WHEN_DONE = path.resolve('test/support/exit-when-done.ts');

const runsDir = path.resolve('.data/test-runs');
const runDir = path.join(runsDir, String(process.pid));

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

function fulfilled<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
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
  let cleanedUp = false;
  const cleanUp = async () => {
    if (cleanedUp) return;
    cleanedUp = true;
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
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
    progress('starting PostgreSQL and Temporal, resolving the Temporal test server...');
    // allSettled, not all: when one part fails the others still finish starting, and are stopped.
    const [pgResult, temporalResult, testServerResult] = await Promise.allSettled([
      freePort().then(async (port) => {
        const pg = await startLocalPostgres({
          dataDir: path.join(runDir, 'postgres'),
          port,
          database: 'postgres',
          ephemeral: true,
        });
        cleanups.push(() => pg.stop());
        return pg;
      }),
      resolveTemporalCli({ log: progress }).then(async (cliPath) => {
        if (givenTemporal) return { cliPath, server: givenTemporal };
        const server = await startPrivateTemporalDevServer({
          cliPath,
          logFile: path.join(runDir, 'temporal.log'),
        });
        cleanups.push(() => server.stop());
        return { cliPath, server };
      }),
      resolveTemporalTestServer({ log: progress }),
    ]);
    const pg = fulfilled(pgResult);
    const temporal = fulfilled(temporalResult);
    const testServerPath = fulfilled(testServerResult);
    if (interrupted) {
      await cleanUp();
      return 130;
    }

    const files = process.argv.slice(2);
    const args = [
      '--import',
      'tsx',
      // A file whose tests are done but which leaves a handle open (a server, a timer) would
      // otherwise keep the whole run waiting forever; this ends it a while after its tests
      // (not --test-force-exit, which dropped tests of a file from the report).
      '--import',
      EXIT_WHEN_DONE,
      '--test',
      `--test-concurrency=${TEST_CONCURRENCY}`,
      `--test-timeout=${PER_TEST_TIMEOUT_MS}`,
      ...(files.length > 0 ? files : [DEFAULT_PATTERN]),
    ];
    progress(`PostgreSQL ${redactUrl(pg.url)}`);
    progress(
      givenTemporal
        ? `Temporal ${givenTemporal.address} namespace ${givenTemporal.namespace} (TEST_TEMPORAL_ADDRESS)`
        : `Temporal dev server ${temporal.server.address} (${temporal.cliPath})`,
    );
    progress(`Temporal test server ${testServerPath}`);
    progress(
      `ready after ${formatDuration(Date.now() - started)}; running ${files.join(' ') || DEFAULT_PATTERN}`,
    );

    runner = spawn(process.execPath, args, {
      stdio: 'inherit',
      env: {
        ...process.env,
        TEST_PG_SERVER_URL: pg.url,
        TEST_TEMPORAL_ADDRESS: temporal.server.address,
        TEST_TEMPORAL_NAMESPACE: temporal.server.namespace,
        TEMPORAL_CLI_PATH: temporal.cliPath,
        TEMPORAL_TEST_SERVER_PATH: testServerPath,
      },
    });
    const child = runner;
    // Hooks have no timeout of their own: a hung `before` would hold the run past CI's limit.
    const watchdog = setTimeout(() => {
      child.kill('SIGINT');
      setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
    }, WHOLE_RUN_TIMEOUT_MS);
    const code = await new Promise<number>((resolve) => {
      child.once('error', () => resolve(1));
      child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 128 : 1)));
    });
    clearTimeout(watchdog);
    await cleanUp();
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
