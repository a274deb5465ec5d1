import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LocalPostgres, startLocalPostgres } from '../db/embedded-postgres.js';
import { lowerPriority } from '../lib/process-priority.js';
import { loadSettings } from '../lib/settings.js';
import { temporalConnectionOptions } from '../lib/temporal-connection.js';
import { restartOneAtATime, untilReady } from './cluster/rolling-restart.js';
import { loadClusterSettings, mediaGatewayPorts, type WorkerGroup } from './cluster/settings.js';
import { type Running, Supervised, spawnedChildren, spawnPart } from './cluster/supervisor.js';
import { allTemporalPorts, type PostgresTarget, temporalServerConfig } from './cluster/temporal-config.js';
import {
  cliTlsEnv,
  historyShardCount,
  registerNamespace,
  setUpTemporalSchema,
  waitUntilTemporalServes,
  writeUiConfig,
} from './cluster/temporal-server.js';
import { runMigrations } from './migrate.js';
import { acceptsTcp, redactUrl, waitForTcp } from './processes.js';
import { planS3Server, untilS3Serves } from './s3-server.js';
import { resolveSipSide, SIP_NEEDS_SPEECH, sipAddress } from './sip-side.js';
import { resolveTemporalCli } from './temporal-binaries.js';
import { registerSearchAttributes } from './temporal-dev-server.js';
import { resolveServerBinary } from './temporal-server-binaries.js';
import { setUpVoice } from './voice-setup.js';

// `npm run start:cluster`: the shape production runs, on this machine and without Docker
// (operations contract, section 6; README "Production"):
//   PostgreSQL     embedded (data in .data/cluster/postgres, port 54330) unless DATABASE_URL is set;
//                  the service's database plus Temporal's `temporal` and `temporal_visibility`
//   Temporal       the real server (go.temporal.io/server, built and cached by
//                  scripts/temporal-server-binaries.ts) on that PostgreSQL, schema set up and upgraded
//                  by docker/temporal-schema.sh, namespace and search attributes by
//                  docker/temporal-namespace.sh; unless TEMPORAL_ADDRESS names an existing one
//   Web UI         github.com/temporalio/ui-server/v2 in front of it
//   migrations     of the service's database
//   workers        WORKER_PROCESSES (default calls=2,webhooks=2,carrier-simulator=1) processes of
//                  `workers/main.ts <queue>`, the carrier simulator first
//   API            API_PROCESSES (default 2) processes of `api/main.ts` sharing PORT (SO_REUSEPORT)
//   S3 store       with RECORDINGS_STORE=s3 and no RECORDINGS_S3_ENDPOINT: versitygw over
//                  .data/cluster/s3 (scripts/s3-server.ts), bucket RECORDINGS_S3_BUCKET (default
//                  `recordings`); the gateways upload recordings there and the API reads them there
// Every part runs under a supervisor that starts it again with backoff when it dies
// (scripts/cluster/supervisor.ts). With speech, MEDIA_GATEWAYS (default 1) media gateways run, the
// n-th on MEDIA_PORT + 10·n; SIGUSR2 restarts them one at a time, each draining its calls first
// (scripts/cluster/rolling-restart.ts). Ctrl-C (SIGINT, SIGTERM, SIGHUP) stops them in order: the API,
// the workers, the carrier simulator, the Web UI, Temporal, PostgreSQL. Data lives in
// $VOICE_AGENT_DATA_DIR/cluster (default .data/cluster), apart from `npm start`'s.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DATA_DIR = path.resolve(ROOT, process.env.VOICE_AGENT_DATA_DIR || '.data', 'cluster');
const TEMPORAL_DIR = path.join(DATA_DIR, 'temporal');
const PG_DIR = path.join(DATA_DIR, 'postgres');

/** RECORDINGS_STORE=s3 without RECORDINGS_S3_ENDPOINT: the cluster runs its own store (scripts/s3-server.ts). */
const ownS3 = process.env.RECORDINGS_STORE === 's3' && !process.env.RECORDINGS_S3_ENDPOINT;
if (ownS3) process.env.RECORDINGS_S3_BUCKET ||= 'recordings';
const settings = loadSettings();
const cluster = loadClusterSettings();

interface Part {
  name: string;
  /** Shutdown goes from the highest rank down. */
  rank: number;
  stop(): Promise<void>;
}
/** The media gateway stops before the workers, which then end the calls whose audio it held. */
const RANK = {
  postgres: 0,
  temporal: 1,
  ui: 2,
  s3: 2.2,
  speech: 2.5,
  simulator: 3,
  workers: 4,
  media: 4.5,
  sip: 4.7,
  api: 5,
} as const;

const parts: Part[] = [];
let stopping = false;

function say(line: string): void {
  process.stdout.write(`[start:cluster] ${line}\n`);
}

async function started(part: Part): Promise<void> {
  parts.push(part);
  if (stopping) await part.stop().catch(() => {});
}

async function shutdown(exitCode: number, reason: string): Promise<never> {
  if (stopping) return new Promise<never>(() => {});
  stopping = true;
  say(`${reason}; stopping`);
  // Rank by rank, from the API down to PostgreSQL; the processes of one rank (the API processes,
  // the workers) stop together.
  const ranks = [...new Set(parts.map((part) => part.rank))].sort((a, b) => b - a);
  for (const rank of ranks) {
    const group = parts.filter((part) => part.rank === rank);
    say(`stopping ${group.map((part) => part.name).join(', ')}`);
    await Promise.all(
      group.map((part) =>
        part.stop().catch((error: unknown) => say(`${part.name} did not stop cleanly: ${String(error)}`)),
      ),
    );
  }
  say('stopped');
  process.exit(exitCode);
}

/** The media gateways, in order, and where each says it is ready. */
const gateways: { part: Supervised; readyz: string }[] = [];
let restartingGateways = false;

/**
 * SIGUSR2: the media gateways restart one at a time (scripts/cluster/rolling-restart.ts), each
 * draining its calls first (up to MEDIA_DRAIN_SECONDS) while the others take the new ones.
 */
async function restartGateways(): Promise<void> {
  if (restartingGateways || stopping || gateways.length === 0) return;
  restartingGateways = true;
  try {
    const drainMs = settings.media.drainSeconds * 1000;
    const done = await restartOneAtATime(
      gateways.map(({ part }) => ({ name: part.name, restart: (graceMs) => part.restart(graceMs) })),
      { graceMs: drainMs + 15_000, ready: (n) => untilReady(gateways[n]!.readyz, 120_000), log: say },
    );
    if (done) say('media gateways: rolling restart done');
  } finally {
    restartingGateways = false;
  }
}

async function supervise(name: string, rank: number, launch: () => Promise<Running>): Promise<Supervised> {
  const part = new Supervised(name, launch, say);
  await part.start();
  await started({ name, rank, stop: () => part.stop() });
  return part;
}

// ---- PostgreSQL ----

interface Database {
  /** The service's database. */
  url: string;
  /** Where Temporal's databases go: the same server. */
  target: PostgresTarget;
}

function targetOf(url: string): PostgresTarget {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 5432),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
}

async function startPostgres(): Promise<Database> {
  if (settings.databaseUrl) {
    say(
      `PostgreSQL: ${redactUrl(settings.databaseUrl)} (DATABASE_URL); Temporal's databases go on the same server`,
    );
    return { url: settings.databaseUrl, target: targetOf(settings.databaseUrl) };
  }
  let url = '';
  await supervise('PostgreSQL', RANK.postgres, async () => {
    const pg: LocalPostgres = await startLocalPostgres({
      dataDir: PG_DIR,
      port: cluster.postgresPort,
      spawned: (pid) => lowerPriority(pid, cluster.backgroundNice),
      log: (line) => say(`PostgreSQL: ${line}`),
    });
    url = pg.url;
    if (pg.startedHere) {
      say(`PostgreSQL: started on port ${cluster.postgresPort}, data in ${PG_DIR} (log ${pg.logFile})`);
      return { pid: undefined, exited: pg.exited.then(() => 'exited'), stop: () => pg.stop() };
    }
    // Already running for this folder (left by an earlier run, or restarted by someone with
    // pg_ctl): joined, and stopped with pg_ctl at the end.
    say(`PostgreSQL: joined the one already running on port ${cluster.postgresPort} for ${PG_DIR}`);
    return { pid: undefined, exited: new Promise<string>(() => {}), stop: () => pgCtlStop() };
  });
  return { url, target: targetOf(url) };
}

async function pgCtlStop(): Promise<void> {
  if (!existsSync(path.join(PG_DIR, 'postmaster.pid'))) return;
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  const { pg_ctl } = (await import(pkg)) as { pg_ctl: string };
  const owner = statSync(PG_DIR);
  execFileSync(pg_ctl, ['stop', '-D', PG_DIR, '-m', 'fast', '-w'], {
    stdio: 'ignore',
    ...(process.getuid?.() === 0 ? { uid: owner.uid, gid: owner.gid } : {}),
  });
}

// ---- Temporal ----

async function startTemporal(
  database: Promise<Database>,
): Promise<{ address: string; uiUrl: string | undefined }> {
  if (!settings.temporalAddressIsDefault) {
    say(`Temporal: ${settings.temporalAddress} (TEMPORAL_ADDRESS), namespace ${settings.temporalNamespace}`);
    await registerSearchAttributes(settings, say);
    return { address: settings.temporalAddress, uiUrl: undefined };
  }
  const address = `127.0.0.1:${cluster.temporalPort}`;
  mkdirSync(TEMPORAL_DIR, { recursive: true });
  // The builds are CPU-bound: one after the other, the quick one first. PostgreSQL starts meanwhile.
  const log = (line: string) => say(line);
  const sqlTool = await resolveServerBinary('sql-tool', { log });
  const server = await resolveServerBinary('server', { log });
  const uiServer = await resolveServerBinary('ui-server', { log });
  const cli = await resolveTemporalCli({ log });
  const { target } = await database;
  if (stopping) return { address, uiUrl: undefined };

  say('Temporal: bringing the schemas of its databases up to date (docker/temporal-schema.sh)');
  await setUpTemporalSchema({ sqlTool, postgres: target, logFile: path.join(TEMPORAL_DIR, 'schema.log') });
  const { shards, existing } = await historyShardCount({
    postgres: target,
    wanted: cluster.historyShards,
    wantedExplicitly: Boolean(process.env.TEMPORAL_HISTORY_SHARDS),
  });
  const configFile = path.join(TEMPORAL_DIR, 'config.yaml');
  // CLUSTER_TEMPORAL_TLS_CERT: the server presents it, and with a client certificate asks every
  // client for one the same CA signed (mutual TLS); every process connects with TEMPORAL_TLS_*.
  const clientTls = settings.temporalTls;
  const serverTls = cluster.temporalServerTls && {
    certFile: cluster.temporalServerTls.certPath,
    keyFile: cluster.temporalServerTls.keyPath,
    caFile: clientTls!.caPath!,
    serverName: clientTls!.serverName!,
    ...(clientTls?.clientCert
      ? {
          clientCaFile: clientTls.caPath!,
          systemWorker: { certFile: clientTls.clientCert.certPath, keyFile: clientTls.clientCert.keyPath },
        }
      : {}),
  };
  const connectionTls = serverTls
    ? temporalConnectionOptions({ ...settings, temporalAddress: address }).tls
    : undefined;
  // The same file docker-compose.yml mounts into its Temporal server.
  const dynamicConfigFile = path.join(ROOT, 'docker', 'temporal-dynamicconfig.yaml');
  writeFileSync(
    configFile,
    temporalServerConfig({
      postgres: target,
      frontendPort: cluster.temporalPort,
      historyShards: shards,
      dynamicConfigFile,
      logLevel: settings.logLevel === 'debug' ? 'info' : 'warn',
      ...(serverTls ? { tls: serverTls } : {}),
    }),
  );
  const logFile = path.join(TEMPORAL_DIR, 'temporal.log');
  const temporal = await supervise('Temporal server', RANK.temporal, async () =>
    spawnPart({
      command: server,
      args: ['--config-file', configFile, '--allow-no-auth', 'start'],
      env: process.env,
      cwd: TEMPORAL_DIR,
      logFile,
      stopSignal: 'SIGTERM',
      graceMs: 30_000,
      nice: cluster.backgroundNice,
    }),
  );
  await waitUntilTemporalServes(address, {
    timeoutMs: 120_000,
    tls: connectionTls,
    gaveUp: () =>
      stopping
        ? 'stopping'
        : temporal.starts > 1
          ? `the Temporal server keeps exiting; see ${logFile}`
          : undefined,
  });
  say(
    `Temporal: server ${address} (pid ${temporal.pid}), ${shards} history shards${existing ? '' : ' (new cluster)'}, config ${configFile}, log ${logFile}`,
  );
  await registerNamespace({
    cli,
    address,
    namespace: settings.temporalNamespace,
    logFile: path.join(TEMPORAL_DIR, 'namespace.log'),
    tlsEnv: serverTls ? cliTlsEnv(clientTls) : {},
  });
  say(`Temporal: namespace ${settings.temporalNamespace} and its search attributes are registered`);

  const uiDir = path.join(TEMPORAL_DIR, 'ui');
  mkdirSync(uiDir, { recursive: true });
  const ui = writeUiConfig({
    dir: uiDir,
    uiPort: cluster.uiPort,
    temporalAddress: address,
    namespace: settings.temporalNamespace,
    ...(serverTls
      ? {
          tls: {
            caFile: serverTls.caFile,
            serverName: serverTls.serverName,
            ...(clientTls?.clientCert
              ? { certFile: clientTls.clientCert.certPath, keyFile: clientTls.clientCert.keyPath }
              : {}),
          },
        }
      : {}),
  });
  const uiProcess = await supervise('Temporal Web UI', RANK.ui, async () =>
    spawnPart({
      command: uiServer,
      args: ui.args,
      env: process.env,
      cwd: uiDir,
      logFile: path.join(TEMPORAL_DIR, 'ui.log'),
      stopSignal: 'SIGTERM',
      graceMs: 10_000,
      nice: cluster.backgroundNice,
    }),
  );
  if (!(await waitForTcp('127.0.0.1', cluster.uiPort, { timeoutMs: 30_000 }))) {
    throw new Error(
      `the Temporal Web UI did not come up on port ${cluster.uiPort}; see ${path.join(TEMPORAL_DIR, 'ui.log')}`,
    );
  }
  say(`Temporal Web UI: pid ${uiProcess.pid}, log ${path.join(TEMPORAL_DIR, 'ui.log')}`);
  return { address, uiUrl: `http://127.0.0.1:${cluster.uiPort}` };
}

// ---- the service's processes ----

function nodePart(args: string[], env: NodeJS.ProcessEnv, graceMs: number, nice = 0): () => Promise<Running> {
  return async () =>
    spawnPart({
      command: process.execPath,
      args: ['--import', 'tsx', ...args],
      env,
      cwd: ROOT,
      stopSignal: 'SIGTERM',
      graceMs,
      nice,
    });
}

async function startWorkers(group: WorkerGroup, env: NodeJS.ProcessEnv): Promise<Supervised[]> {
  const isSimulator = group.worker === 'carrier-simulator';
  const started: Supervised[] = [];
  for (let i = 1; i <= group.processes; i++) {
    const name = `${isSimulator ? 'carrier simulator' : `workers ${group.worker}`} #${i}`;
    const part = await supervise(
      name,
      isSimulator ? RANK.simulator : RANK.workers,
      // Below the gateways: a talking call's turns are taken there, the workers keep the record.
      nodePart(['workers/main.ts', group.worker], env, 30_000, cluster.backgroundNice),
    );
    say(`${name}: pid ${part.pid} (workers/main.ts ${group.worker})`);
    started.push(part);
  }
  return started;
}

async function main(): Promise<void> {
  process.on('SIGUSR2', () => void restartGateways());
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => void shutdown(0, `${signal} received`));
  }
  const apiHost = settings.host;
  const shownHost = apiHost === '0.0.0.0' || apiHost === '::' ? '127.0.0.1' : apiHost;
  if (await acceptsTcp(shownHost, settings.port)) {
    throw new Error(
      `port ${settings.port} is already in use (npm start, or another cluster?); set PORT to use another one`,
    );
  }
  if (settings.temporalAddressIsDefault) {
    for (const port of [...allTemporalPorts(cluster.temporalPort), cluster.uiPort]) {
      if (await acceptsTcp('127.0.0.1', port)) {
        throw new Error(
          `port ${port}, which the cluster's Temporal server or Web UI needs, is already in use (npm start's dev server?); set CLUSTER_TEMPORAL_PORT (and CLUSTER_UI_PORT) to move them`,
        );
      }
    }
  }
  mkdirSync(DATA_DIR, { recursive: true });
  say(
    `data in ${DATA_DIR}; ${cluster.apiProcesses} API processes, workers ${cluster.workerGroups.map((g) => `${g.worker}=${g.processes}`).join(',')}`,
  );

  const database = startPostgres();
  // A failed PostgreSQL start is reported by the Promise.all below; until then it must not be an
  // unhandled rejection.
  database.catch(() => {});
  const [db, temporal] = await Promise.all([
    database.then(async (db) => {
      const applied = await runMigrations(db.url);
      say(applied.length ? `migrations applied: ${applied.join(', ')}` : 'database schema is up to date');
      return db;
    }),
    startTemporal(database),
  ]);
  if (stopping) return;

  const voice = await setUpVoice(settings, DATA_DIR, say);
  const speechServer = voice.localServer;
  if (speechServer)
    await started({ name: 'local speech server', rank: RANK.speech, stop: () => speechServer.stop() });
  const s3 = ownS3 ? await startOwnS3() : undefined;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: settings.temporalNamespace,
    ...voice.env,
    ...s3?.env,
  };
  const gatewayPorts = voice.env.MEDIA_STREAMS_TOKEN
    ? Array.from({ length: cluster.mediaGateways }, (_, n) => mediaGatewayPorts(settings.media.port, n))
    : [];
  // Several gateways: the workers and the API place new calls on one that is not draining; the
  // first is the one of the SIP side's calls that come in (and of MEDIA_CONTROL_URL).
  if (gatewayPorts.length > 1) {
    env.MEDIA_GATEWAY_URLS = gatewayPorts.map(({ port }) => `http://127.0.0.1:${port}`).join(',');
    env.MEDIA_GATEWAY_URL = `http://127.0.0.1:${gatewayPorts[0]!.port}`;
    env.MEDIA_CONTROL_LISTEN = `127.0.0.1:${gatewayPorts[0]!.controlPort}`;
    env.MEDIA_CONTROL_URL = `http://127.0.0.1:${gatewayPorts[0]!.controlPort}`;
  }
  for (const group of cluster.workerGroups) await startWorkers(group, env);
  for (const [n, { port, controlPort }] of gatewayPorts.entries()) {
    // One gateway keeps the settings as given; several each take ports of their own.
    const own =
      gatewayPorts.length === 1
        ? {}
        : {
            MEDIA_PORT: String(port),
            MEDIA_CONTROL_LISTEN: `127.0.0.1:${controlPort}`,
            MEDIA_CONTROL_URL: `http://127.0.0.1:${controlPort}`,
          };
    const name = gatewayPorts.length === 1 ? 'media gateway' : `media gateway #${n + 1}`;
    const part = await supervise(name, RANK.media, nodePart(['media/main.ts'], { ...env, ...own }, 30_000));
    gateways.push({ part, readyz: `http://127.0.0.1:${port}/readyz` });
    say(`${name}: pid ${part.pid} (media/main.ts, port ${port})`);
  }
  // CARRIER=sip: the SIP side (scripts/sip-side.ts), stopped before the gateway: its calls end with a BYE.
  if (settings.media.carrier === 'sip') {
    if (!voice.env.MEDIA_STREAMS_TOKEN) throw new Error(SIP_NEEDS_SPEECH);
    const binary = await resolveSipSide({ log: say });
    const part = await supervise('SIP side', RANK.sip, async () =>
      spawnPart({ command: binary, args: [], env, cwd: ROOT, stopSignal: 'SIGTERM', graceMs: 10_000 }),
    );
    say(`SIP side: pid ${part.pid} (${binary})`);
  }
  // The dashboard links each call to its workflow in the Web UI.
  const apiEnv = {
    ...env,
    API_REUSE_PORT: 'true',
    ...(temporal.uiUrl ? { TEMPORAL_UI_URL: temporal.uiUrl } : {}),
  };
  for (let i = 1; i <= cluster.apiProcesses; i++) {
    const part = await supervise(`API #${i}`, RANK.api, nodePart(['api/main.ts'], apiEnv, 20_000));
    say(`API #${i}: pid ${part.pid} (api/main.ts, port ${settings.port} shared)`);
  }
  // Up means its /healthz answers: a port that accepts connections may be another process's that
  // took it after the check above, and then every API process fails to listen.
  const urlHost = shownHost.includes(':') ? `[${shownHost}]` : shownHost;
  if (!(await untilReady(`http://${urlHost}:${settings.port}/healthz`, 120_000))) {
    if (!stopping)
      await shutdown(
        1,
        `the API did not come up on ${shownHost}:${settings.port} (nothing answered its /healthz; if the port accepts connections, another process took it)`,
      );
    return;
  }
  say('');
  say(`API              http://${shownHost}:${settings.port}/v1`);
  say(`Dashboard: http://${shownHost}:${settings.port}/`);
  say(`Temporal Web UI  ${temporal.uiUrl ?? `(the server at ${temporal.address} runs its own, if any)`}`);
  say(`Temporal         ${temporal.address} namespace ${settings.temporalNamespace}`);
  say(`PostgreSQL       ${redactUrl(db.url)}`);
  if (voice.env.MEDIA_STREAMS_TOKEN)
    say(`Media streams: ws://${shownHost}:${settings.media.port}/media/streams`);
  if (gateways.length > 1)
    say(`Media gateways   ${gateways.length}; restart them one at a time: kill -USR2 ${process.pid}`);
  if (settings.media.carrier === 'sip') say(`SIP: ${sipAddress(settings)}`);
  if (cluster.backgroundNice > 0)
    say(
      `Priority         the workers, Temporal, its Web UI, PostgreSQL and the S3 store at nice ${cluster.backgroundNice} (CLUSTER_BACKGROUND_NICE): the gateways' audio and turns go first`,
    );
  if (s3)
    say(
      `Recordings       S3 store ${s3.endpoint}, bucket ${s3.bucket} (versitygw, data in ${path.join(DATA_DIR, 's3')})`,
    );
  // The embedded PostgreSQL's password is the fixed local one; a DATABASE_URL's is not shown.
  const cliUrl = settings.databaseUrl ? redactUrl(db.url) : db.url;
  say(
    `Operator CLI     DATABASE_URL=${cliUrl} TEMPORAL_ADDRESS=${temporal.address} npm run --silent admin -- ...`,
  );
  say('Press Ctrl-C to stop.');
}

/**
 * The cluster's own S3-compatible store, with keys of this start (given to the cluster's
 * processes only), supervised like every other part: started again on the same port and keys,
 * over the same folder, so what it holds is still there.
 */
async function startOwnS3() {
  const bucket = settings.recordingsStore.kind === 's3' ? settings.recordingsStore.bucket : 'recordings';
  const plan = await planS3Server({ dataDir: path.join(DATA_DIR, 's3'), bucket, log: say });
  const part = await supervise('S3 store', RANK.s3, async () => {
    const running = spawnPart({
      command: plan.binary,
      args: plan.args,
      env: { ...process.env, ...plan.serverEnv },
      cwd: ROOT,
      logFile: path.join(DATA_DIR, 's3.log'),
      stopSignal: 'SIGTERM',
      graceMs: 5_000,
      nice: cluster.backgroundNice,
    });
    try {
      await untilS3Serves(plan);
    } catch (error) {
      await running.stop();
      throw error;
    }
    return running;
  });
  say(`S3 store: pid ${part.pid} (versitygw, ${plan.endpoint})`);
  return plan;
}

// The children run in their own process groups: if this process ends without its orderly
// shutdown (an uncaught error), they must not outlive it and keep the ports.
process.on('exit', () => {
  for (const child of spawnedChildren) child.kill('SIGTERM');
});

main().catch((error: unknown) => {
  void shutdown(1, `start failed: ${error instanceof Error ? error.message : String(error)}`);
});
