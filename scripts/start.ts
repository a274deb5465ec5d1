import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LocalPostgres, startLocalPostgres } from '../db/embedded-postgres.js';
import { loadSettings } from '../lib/settings.js';
import { runMigrations } from './migrate.js';
import { acceptsTcp, freePort, hasExited, redactUrl, stopChild, waitForTcp } from './processes.js';
import { resolveSipSide, SIP_NEEDS_SPEECH, sipAddress } from './sip-side.js';
import {
  registerSearchAttributes,
  startTemporalDevServer,
  type TemporalDevServer,
} from './temporal-dev-server.js';
import { setUpVoice } from './voice-setup.js';

// `npm start`: everything on embedded defaults (operations contract, section 1).
//   DATABASE_URL unset     → the local PostgreSQL, data in .data/postgres
//   TEMPORAL_ADDRESS unset → the Temporal dev server on 127.0.0.1:7233, Web UI on :8233,
//                            workflows kept in .data/temporal/temporal.sqlite
// then the migrations and three node processes: the carrier simulator (`workers/main.ts
// carrier-simulator`, the far ends of simulated calls), the service's workers (`workers/main.ts
// service`: calls and webhooks) and the API. The simulator runs apart because it stands in for a
// telephone carrier, which does not go down with our workers: calls ringing while the workers
// restart are still answered. Ctrl-C (SIGINT, SIGTERM, SIGHUP) stops what this started in reverse
// order: the API first, so requests in flight finish, then the workers, the carrier simulator
// (still answering the calls the workers wind down), Temporal and PostgreSQL. Every child runs in
// its own process group, so the terminal's Ctrl-C reaches only this process and the order holds.
// A worker process that dies on its own is started again, as a process supervisor would, unless
// it keeps dying; anything else that dies on its own stops the rest, and the exit code is 1.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** `.data/` of the clone; VOICE_AGENT_DATA_DIR moves it (the tests of this script use that). */
const DATA_DIR = path.resolve(ROOT, process.env.VOICE_AGENT_DATA_DIR || '.data');
const TEMPORAL_UI_PORT_OFFSET = 1000;
/** A worker process that exits on its own is started again after this long... */
const WORKER_RESTART_DELAY_MS = 1000;
/** ...unless this is its third unexpected exit within a minute: then everything stops. */
const WORKER_EXIT_LIMIT = 3;
const WORKER_EXIT_WINDOW_MS = 60_000;

interface Part {
  name: string;
  /** Start order; shutdown goes from the highest down, whatever order parallel starts finished in. */
  rank: number;
  stop(): Promise<void>;
}

const settings = loadSettings();
const running: Part[] = [];
const nodeChildren: ChildProcess[] = [];
let stopping = false;

function say(line: string): void {
  process.stdout.write(`[start] ${line}\n`);
}

/** Registers a started part; one that finishes starting after Ctrl-C is stopped straight away. */
async function started(part: Part): Promise<void> {
  running.push(part);
  if (stopping) await part.stop().catch(() => {});
}

async function shutdown(exitCode: number, reason: string): Promise<never> {
  if (stopping) return new Promise<never>(() => {});
  stopping = true;
  say(`${reason}; stopping`);
  for (const part of running.sort((a, b) => b.rank - a.rank)) {
    say(`stopping ${part.name}`);
    await part.stop().catch((error: unknown) => say(`${part.name} did not stop cleanly: ${String(error)}`));
  }
  say('stopped');
  process.exit(exitCode);
}

/** An unexpected end of a part takes the whole service down, with a non-zero exit code. */
function watch(name: string, exited: Promise<unknown>): void {
  void exited.then((how) => {
    if (!stopping)
      void shutdown(1, `${name} exited unexpectedly${typeof how === 'string' ? ` (${how})` : ''}`);
  });
}

/**
 * Each process's port for /metrics, /healthz and /readyz (METRICS_PORT; docs/operations.md,
 * "Metrics"): these unless taken, then a free one (printed at start).
 */
const METRICS_PORTS = { workers: 9464, simulator: 9465, media: 9466 };

async function metricsPort(wanted: number): Promise<number> {
  return (await acceptsTcp(settings.host === '0.0.0.0' ? '127.0.0.1' : settings.host, wanted, 300))
    ? freePort()
    : wanted;
}

function spawnNodeProcess(name: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawnProcess(name, process.execPath, ['--import', 'tsx', ...args], env);
}

function spawnProcess(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(command, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  nodeChildren.push(child);
  child.once('error', (error) => {
    if (!stopping) void shutdown(1, `${name} could not be started: ${error.message}`);
  });
  return child;
}

function exitOf(child: ChildProcess): Promise<string> {
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `exit code ${code}`)),
  );
}

/**
 * A `workers/main.ts` process running `workers` (task queues or named lists), kept running: when it
 * exits on its own it is started again, and only an exit that keeps recurring stops everything.
 */
async function startWorkerProcess(
  name: string,
  workers: string[],
  rank: number,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  await startSupervised(name, ['workers/main.ts', ...workers], rank, env);
}

/**
 * A node process (or, with `program`, that binary) kept running like the workers: started again
 * when it exits on its own.
 */
async function startSupervised(
  name: string,
  args: string[],
  rank: number,
  env: NodeJS.ProcessEnv,
  program?: string,
): Promise<void> {
  const exits: number[] = [];
  let child: ChildProcess;
  const launch = () => {
    child = program ? spawnProcess(name, program, args, env) : spawnNodeProcess(name, args, env);
    say(`${name}: pid ${child.pid} (${[program, ...args].filter(Boolean).join(' ')})`);
    void exitOf(child).then((how) => {
      if (stopping) return;
      const now = Date.now();
      exits.push(now);
      while (exits[0] <= now - WORKER_EXIT_WINDOW_MS) exits.shift();
      if (exits.length >= WORKER_EXIT_LIMIT) {
        void shutdown(1, `${name} exited unexpectedly (${how}), ${exits.length} times within a minute`);
        return;
      }
      say(`${name} exited unexpectedly (${how}); starting it again`);
      setTimeout(() => {
        if (!stopping) launch();
      }, WORKER_RESTART_DELAY_MS);
    });
  };
  launch();
  await started({ name, rank, stop: () => stopChild(child, { signal: 'SIGTERM', graceMs: 30_000 }) });
}

async function startPostgres(): Promise<string> {
  if (settings.databaseUrl) {
    say(`PostgreSQL: ${redactUrl(settings.databaseUrl)} (DATABASE_URL)`);
    return settings.databaseUrl;
  }
  const pg: LocalPostgres = await startLocalPostgres({
    dataDir: path.join(DATA_DIR, 'postgres'),
    log: (line) => say(`PostgreSQL: ${line}`),
  });
  if (pg.startedHere) {
    await started({ name: 'PostgreSQL', rank: 0, stop: () => pg.stop() });
    watch('PostgreSQL', pg.exited);
    say(`PostgreSQL: started, data in ${path.join(DATA_DIR, 'postgres')} (log ${pg.logFile})`);
  } else {
    say(`PostgreSQL: joined the one already running for ${path.join(DATA_DIR, 'postgres')}`);
  }
  return pg.url;
}

async function startTemporal(): Promise<{ address: string; uiUrl: string | undefined }> {
  if (!settings.temporalAddressIsDefault) {
    say(`Temporal: ${settings.temporalAddress} (TEMPORAL_ADDRESS)`);
    await registerSearchAttributes(settings, say);
    return { address: settings.temporalAddress, uiUrl: undefined };
  }
  const [ip, port] = splitAddress(settings.temporalAddress);
  const server: TemporalDevServer = await startTemporalDevServer({
    ip,
    port,
    uiPort: port + TEMPORAL_UI_PORT_OFFSET,
    dbFilename: path.join(DATA_DIR, 'temporal', 'temporal.sqlite'),
    logFile: path.join(DATA_DIR, 'temporal', 'temporal.log'),
    namespace: settings.temporalNamespace,
    detached: true,
    log: (line) => say(line),
  });
  if (server.startedHere) {
    await started({ name: 'Temporal dev server', rank: 1, stop: () => server.stop() });
    watch('Temporal dev server', server.exited);
    say(
      `Temporal: dev server started on ${server.address}, data and log in ${path.join(DATA_DIR, 'temporal')}`,
    );
  }
  return { address: server.address, uiUrl: server.uiUrl };
}

/** Speech, when configured (scripts/voice-setup.ts); the local speech server stops after the gateway. */
async function startSpeech(): Promise<NodeJS.ProcessEnv> {
  const voice = await setUpVoice(settings, DATA_DIR, say);
  const server = voice.localServer;
  if (server) await started({ name: 'local speech server', rank: 1.5, stop: () => server.stop() });
  return voice.env;
}

function splitAddress(address: string): [string, number] {
  const at = address.lastIndexOf(':');
  return [address.slice(0, at), Number(address.slice(at + 1))];
}

async function main(): Promise<void> {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => void shutdown(0, `${signal} received`));
  }
  const apiHost = settings.host;
  const apiPort = settings.port;
  const shownHost = apiHost === '0.0.0.0' || apiHost === '::' ? '127.0.0.1' : apiHost;
  if (await acceptsTcp(shownHost, apiPort)) {
    throw new Error(`port ${apiPort} is already in use (another npm start?); set PORT to use another one`);
  }

  const [databaseUrl, temporal] = await Promise.all([startPostgres(), startTemporal()]);
  if (stopping) return;
  const applied = await runMigrations(databaseUrl);
  say(applied.length ? `migrations applied: ${applied.join(', ')}` : 'database schema is up to date');
  if (stopping) return;

  const speech = await startSpeech();
  if (stopping) return;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: settings.temporalNamespace,
    // The dashboard links each call to its workflow there.
    ...(temporal.uiUrl ? { TEMPORAL_UI_URL: temporal.uiUrl } : {}),
    ...speech,
  };
  // Stopped after the service's workers (higher rank first), so the calls they finish still have
  // a far end.
  const metricsPorts = {
    simulator: await metricsPort(METRICS_PORTS.simulator),
    workers: await metricsPort(METRICS_PORTS.workers),
    media: await metricsPort(METRICS_PORTS.media),
  };
  const withMetrics = (port: number) => ({ ...env, METRICS_PORT: String(port) });
  await startWorkerProcess(
    'carrier simulator',
    ['carrier-simulator'],
    2,
    withMetrics(metricsPorts.simulator),
  );
  await startWorkerProcess('workers', ['service'], 3, withMetrics(metricsPorts.workers));
  // Stopped before the workers, which then end the calls whose audio it held.
  if (env.MEDIA_STREAMS_TOKEN) {
    await startSupervised('media gateway', ['media/main.ts'], 3.5, withMetrics(metricsPorts.media));
  }
  // CARRIER=sip: the SIP side (sip/, built and cached by scripts/sip-side.ts), stopped first: its
  // calls end with a BYE and their streams close, and the gateway and workers complete them.
  if (settings.media.carrier === 'sip') {
    if (!env.MEDIA_STREAMS_TOKEN) throw new Error(SIP_NEEDS_SPEECH);
    await startSupervised('SIP side', [], 3.7, env, await resolveSipSide({ log: say }));
  }
  // The API serves /metrics beside /v1 (a METRICS_PORT of the caller's would move it; not here).
  const { METRICS_PORT: _apiMetrics, ...apiEnv } = env;
  const api = spawnNodeProcess('API', ['api/main.ts'], apiEnv);
  watch('API', exitOf(api));
  await started({ name: 'API', rank: 4, stop: () => stopChild(api, { signal: 'SIGTERM', graceMs: 20_000 }) });

  if (!(await waitForTcp(shownHost, apiPort, { timeoutMs: 120_000, child: api }))) {
    if (!stopping) await shutdown(1, `the API did not come up on ${shownHost}:${apiPort}`);
    return;
  }
  say('');
  say(`API              http://${shownHost}:${apiPort}/v1`);
  say(`Dashboard: http://${shownHost}:${apiPort}/`);
  say(`Temporal Web UI  ${temporal.uiUrl ?? `(the server at ${temporal.address} runs its own, if any)`}`);
  say(`Temporal         ${temporal.address} namespace ${settings.temporalNamespace}`);
  say(`PostgreSQL       ${redactUrl(databaseUrl)}`);
  say(
    `Metrics          http://${shownHost}:${apiPort}/metrics (API), :${metricsPorts.workers} (workers), ` +
      `:${metricsPorts.simulator} (carrier simulator)` +
      (env.MEDIA_STREAMS_TOKEN ? `, :${metricsPorts.media} (media gateway)` : ''),
  );
  if (env.MEDIA_STREAMS_TOKEN) {
    say(`Media streams: ws://${shownHost}:${settings.media.port}/media/streams`);
    if (!settings.media.streamsToken) say(`  token in ${path.join(DATA_DIR, 'media-streams-token')}`);
  }
  if (settings.media.carrier === 'sip') say(`SIP: ${sipAddress(settings)}`);
  say('Press Ctrl-C to stop.');
}

// The node children run in their own process groups: if this process ends without its orderly
// shutdown (an uncaught error), they must not outlive it and keep the API port.
process.on('exit', () => {
  for (const child of nodeChildren) if (!hasExited(child)) child.kill('SIGTERM');
});

main().catch((error: unknown) => {
  void shutdown(1, `start failed: ${error instanceof Error ? error.message : String(error)}`);
});
