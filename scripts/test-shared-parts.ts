import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ensureDatabase, startLocalPostgres } from '../db/embedded-postgres.js';
import { migrate, openOrm } from '../db/orm.js';
import { bundleCallTestWorkflows } from '../test/support/workflow-bundles.js';
import { startLocalSpeechServer } from './local-speech-server.js';
import { freePort, redactUrl } from './processes.js';
import { startS3Server } from './s3-server.js';
import { resolveSipSide } from './sip-side.js';
import { resolveTemporalCli, resolveTemporalTestServer } from './temporal-binaries.js';
import { startPrivateTemporalDevServer } from './temporal-dev-server.js';
import { resolveServerBinary, SERVER_BINARY_KINDS } from './temporal-server-binaries.js';

// The parts `npm test` starts once for the whole run and every test file shares, each handed to
// the files in the environment (the names below); a file run on its own starts what it needs itself.
//   TEST_PG_SERVER_URL         a throw-away PostgreSQL (test/support/database.ts)
//   TEST_PG_TEMPLATE           a database migrated once, copied for each file's own database
//   TEST_TEMPORAL_ADDRESS      a headless in-memory Temporal dev server (test/support/temporal.ts),
//   TEST_TEMPORAL_NAMESPACE    unless the caller names an existing Temporal with these two
//   TEMPORAL_CLI_PATH, TEMPORAL_TEST_SERVER_PATH   the provisioned binaries
//   TEST_WORKFLOW_BUNDLES_DIR  workflow bundles built once for the run (test/support/workflow-bundles.ts)
//   SIP_SIDE_PATH              the SIP side built from sip/ (scripts/sip-side.ts), when Go is here
//   TEST_SPEECH_URL            the real local speech server (test/support/speech-kit.ts), started
//                              only when a file of the run uses it
//   TEST_S3_ENDPOINT, TEST_S3_ACCESS_KEY_ID, TEST_S3_SECRET_ACCESS_KEY   an S3-compatible store
//                              (versitygw, scripts/s3-server.ts; test/support/s3.ts), started only
//                              when a file of the run uses it
// The start:cluster binaries (Temporal's server, its SQL tool and UI server, built with Go once
// per machine, about 7 minutes on 2 cores) are provisioned here too when a file of the run starts a
// cluster, so that a first run on a machine builds them before the files start, not inside a test's
// time limit.

export interface SharedParts {
  env: Record<string, string>;
  /** What each part is, for the lines printed before the runner starts. */
  described: string[];
  /** Stops what was started, last started first. */
  cleanups: (() => Promise<void>)[];
}

const TEMPLATE_DATABASE = 'test_template';
/** A test file that calls this uses the real speech server. */
const USES_SPEECH = 'startTestSpeech(';
/** A test file that calls this uses the S3-compatible store. */
const USES_S3 = 'startTestS3(';
/** A test file that names these starts a cluster (scripts/start-cluster.ts) or checks its binaries. */
const USES_CLUSTER = /start-cluster\.ts|serverBinaryFolder\(/;

function fulfilled<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}

export async function startSharedParts(options: {
  runDir: string;
  files: string[];
  givenTemporal: { address: string; namespace: string } | undefined;
  log: (line: string) => void;
}): Promise<SharedParts> {
  const { runDir, log } = options;
  const parts: SharedParts = { env: {}, described: [], cleanups: [] };
  const bundlesDir = path.join(runDir, 'workflow-bundles');
  // Read by bundleWorkflows() here and in every file.
  process.env.TEST_WORKFLOW_BUNDLES_DIR = bundlesDir;
  const sources = options.files.map((file) => readFileSync(file, 'utf8'));
  const needsSpeech = sources.some((source) => source.includes(USES_SPEECH));
  const needsCluster = sources.some((source) => USES_CLUSTER.test(source));
  const needsS3 = sources.some((source) => source.includes(USES_S3));
  // The speech server's lines once it is up (one per request) go to a file of the run, not among the tests'.
  let speechStarted = false;
  const speechLogFile = path.join(runDir, 'local-speech.log');
  const speechLog = (line: string) =>
    speechStarted ? appendFileSync(speechLogFile, `${line}\n`) : log(line);
  // allSettled, not all: when one part fails the others still finish starting, and are stopped.
  const results = await Promise.allSettled([
    freePort().then(async (port) => {
      const pg = await startLocalPostgres({
        dataDir: path.join(runDir, 'postgres'),
        port,
        database: 'postgres',
        ephemeral: true,
      });
      parts.cleanups.push(() => pg.stop());
      await ensureDatabase(pg.url, TEMPLATE_DATABASE);
      const orm = await openOrm(pg.url.replace(/\/[^/?]+(\?.*)?$/, `/${TEMPLATE_DATABASE}`));
      try {
        await migrate(orm);
      } finally {
        await orm.close(true);
      }
      parts.env.TEST_PG_SERVER_URL = pg.url;
      parts.env.TEST_PG_TEMPLATE = TEMPLATE_DATABASE;
      parts.described.push(`PostgreSQL ${redactUrl(pg.url)} (template database ${TEMPLATE_DATABASE})`);
    }),
    resolveTemporalCli({ log }).then(async (cliPath) => {
      parts.env.TEMPORAL_CLI_PATH = cliPath;
      if (options.givenTemporal) {
        const { address, namespace } = options.givenTemporal;
        parts.env.TEST_TEMPORAL_ADDRESS = address;
        parts.env.TEST_TEMPORAL_NAMESPACE = namespace;
        parts.described.push(`Temporal ${address} namespace ${namespace} (TEST_TEMPORAL_ADDRESS)`);
        return;
      }
      const server = await startPrivateTemporalDevServer({
        cliPath,
        logFile: path.join(runDir, 'temporal.log'),
      });
      parts.cleanups.push(() => server.stop());
      parts.env.TEST_TEMPORAL_ADDRESS = server.address;
      parts.env.TEST_TEMPORAL_NAMESPACE = server.namespace;
      parts.described.push(`Temporal dev server ${server.address} (${cliPath})`);
    }),
    resolveTemporalTestServer({ log }).then((testServerPath) => {
      parts.env.TEMPORAL_TEST_SERVER_PATH = testServerPath;
      parts.described.push(`Temporal test server ${testServerPath}`);
    }),
    bundleCallTestWorkflows().then(() => {
      parts.env.TEST_WORKFLOW_BUNDLES_DIR = bundlesDir;
      parts.described.push(`workflow bundles ${bundlesDir}`);
    }),
    // The SIP side's tests skip where Go is missing and say so: no Go is not a failure of the run.
    resolveSipSide({ log }).then(
      (binary) => {
        parts.env.SIP_SIDE_PATH = binary;
        parts.described.push(`SIP side ${binary}`);
      },
      (error: unknown) => log(`SIP side not built (${error instanceof Error ? error.message : error})`),
    ),
    needsCluster
      ? Promise.all(SERVER_BINARY_KINDS.map((kind) => resolveServerBinary(kind, { log }))).then(() => {
          parts.described.push(`start:cluster's binaries (${SERVER_BINARY_KINDS.join(', ')}) built`);
        })
      : Promise.resolve(),
    needsSpeech
      ? startLocalSpeechServer({ log: speechLog }).then((server) => {
          speechStarted = true;
          parts.cleanups.push(() => server.stop());
          parts.env.TEST_SPEECH_URL = server.url;
          parts.described.push(`local speech server ${server.url}`);
        })
      : Promise.resolve(),
    needsS3
      ? startS3Server({ dataDir: path.join(runDir, 's3'), logFile: path.join(runDir, 's3.log'), log }).then(
          (server) => {
            parts.cleanups.push(() => server.stop());
            parts.env.TEST_S3_ENDPOINT = server.endpoint;
            parts.env.TEST_S3_ACCESS_KEY_ID = server.env.RECORDINGS_S3_ACCESS_KEY_ID;
            parts.env.TEST_S3_SECRET_ACCESS_KEY = server.env.RECORDINGS_S3_SECRET_ACCESS_KEY;
            parts.described.push(`S3-compatible store ${server.endpoint} (versitygw)`);
          },
        )
      : Promise.resolve(),
  ]);
  try {
    for (const result of results) fulfilled(result);
  } catch (error) {
    for (const cleanup of parts.cleanups.reverse()) await cleanup().catch(() => {});
    throw error;
  }
  return parts;
}
