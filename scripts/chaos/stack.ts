import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { migrate, openOrm } from '../../db/orm.js';
import { freePort, hasExited, stopChild, waitForExit, waitForTcp } from '../processes.js';
import { resolveTemporalCli } from '../temporal-binaries.js';
import { startTemporalDevServer, type TemporalDevServer } from '../temporal-dev-server.js';
import { ChaosPostgres } from './postgres.js';

// The service's parts as separate processes, on ports and in a folder of the chaos run's own. Two
// targets share one interface (ChaosStack): `dev`, the way `npm start` runs them (DevStack, below),
// and `cluster`, the way `npm run start:cluster` runs them (cluster-stack.ts).
//
// The dev target: PostgreSQL (ChaosPostgres), a Temporal dev server persisted to a SQLite file (so
// a restart keeps the workflows), the migrations, the carrier simulator (`workers/main.ts
// carrier-simulator`), the service's workers (`workers/main.ts service`) and one API
// (`api/main.ts`). Node processes that exit are started again after 1 s, as npm start's supervisor
// does; an exit the run did not cause is recorded (a crash is a finding).

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RESTART_DELAY_MS = 1000;

export interface UnexpectedExit {
  name: string;
  how: string;
  at: number;
}

export interface LoggedError {
  process: string;
  at: number;
  msg: string;
  detail: string;
}

/** What a scenario breaks, and where the run's clients and checks find the service. */
export interface ChaosStack {
  readonly target: 'dev' | 'cluster';
  readonly errors: LoggedError[];
  readonly exits: UnexpectedExit[];
  readonly postgres: ChaosPostgres;
  readonly databaseUrl: string;
  readonly apiUrl: string;
  readonly temporalAddress: string;
  start(): Promise<void>;
  close(): Promise<void>;
  /** On an abrupt exit: kill what can be killed without waiting. */
  killNow(): void;
  /** kill -9 of a service worker process; resolves, with what was done, when its successor runs. */
  killWorker(): Promise<string>;
  /** Stops the Temporal server and starts it again; resolves, with what was done, when it serves. */
  restartTemporal(): Promise<string>;
  /** kill -9 of an API process (the cluster: another one keeps the port); undefined where there is one API. */
  killApi?: () => Promise<string>;
}

export interface StackOptions {
  /** The run's folder: data, logs. Created by the caller. */
  dir: string;
  simTimeScale: number;
  log: (line: string) => void;
  /** Settings of the service's processes beyond the stack's own (e.g. a language model). */
  env?: NodeJS.ProcessEnv;
}

/** One node process of the service, kept running like npm start keeps its workers running. */
class NodeProcess {
  child: ChildProcess | undefined;
  private stopping = false;
  private expectingExit = false;
  private readyWaiters: (() => void)[] = [];
  private readonly logStream: WriteStream;

  constructor(
    readonly name: string,
    private readonly args: string[],
    private readonly env: () => NodeJS.ProcessEnv,
    private readonly readyMessage: string | undefined,
    private readonly readyPort: number | undefined,
    logFile: string,
    private readonly stack: DevStack,
  ) {
    this.logStream = createWriteStream(logFile, { flags: 'a' });
  }

  /** Starts it and waits until it is ready (its ready log line, or its port accepting). */
  async start(timeoutMs = 120_000): Promise<void> {
    const ready = this.nextReady();
    this.launch();
    await this.waitReady(ready, timeoutMs);
  }

  private nextReady(): Promise<void> {
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  private async waitReady(ready: Promise<void>, timeoutMs: number): Promise<void> {
    if (this.readyPort !== undefined) {
      const ok = await waitForTcp('127.0.0.1', this.readyPort, { timeoutMs });
      if (!ok) throw new Error(`${this.name} did not accept connections on ${this.readyPort}`);
      return;
    }
    // Cancelled once ready, so the timer does not hold the process open for the rest of timeoutMs.
    const wait = new AbortController();
    const timedOut = sleep(timeoutMs, 'timeout' as const, { signal: wait.signal }).catch(
      () => 'ready' as const,
    );
    const outcome = await Promise.race([ready.then(() => 'ready' as const), timedOut]);
    wait.abort();
    if (outcome === 'timeout') {
      throw new Error(`${this.name} did not log "${this.readyMessage}" within ${timeoutMs / 1000} s`);
    }
  }

  private launch(): void {
    const child = spawn(process.execPath, ['--import', 'tsx', ...this.args], {
      cwd: ROOT,
      env: this.env(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    this.logStream.write(`--- ${new Date().toISOString()} started pid ${child.pid}\n`);
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream }).on('line', (line) => this.onLine(line));
    }
    child.once('error', (error) => this.stack.noteExit(this.name, `could not start: ${error.message}`));
    child.once('exit', (code, signal) => {
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      this.logStream.write(`--- ${new Date().toISOString()} pid ${child.pid} exited (${how})\n`);
      if (this.stopping) return;
      if (this.expectingExit) this.expectingExit = false;
      else this.stack.noteExit(this.name, how);
      setTimeout(() => {
        if (!this.stopping) this.launch();
      }, RESTART_DELAY_MS);
    });
  }

  private onLine(line: string): void {
    this.logStream.write(`${line}\n`);
    if (!line.startsWith('{')) return;
    let entry: { level?: string; msg?: string; error?: { message?: string; name?: string } };
    try {
      entry = JSON.parse(line);
    } catch {
      return;
    }
    if (this.readyMessage && entry.msg === this.readyMessage) {
      for (const resolve of this.readyWaiters.splice(0)) resolve();
    }
    if (entry.level === 'error') {
      const detail = entry.error ? `${entry.error.name ?? 'Error'}: ${entry.error.message ?? ''}` : '';
      this.stack.errors.push({ process: this.name, at: Date.now(), msg: entry.msg ?? '', detail });
    }
  }

  /** kill -9, then the supervisor starts it again after 1 s; resolves when the new one is ready. */
  async kill9(): Promise<{ pid: number | undefined }> {
    const child = this.child;
    if (!child || hasExited(child)) throw new Error(`${this.name} is not running`);
    const ready = this.nextReady();
    this.expectingExit = true;
    child.kill('SIGKILL');
    await waitForExit(child, 10_000);
    await this.waitReady(ready, 120_000);
    return { pid: child.pid };
  }

  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.child) await stopChild(this.child, { signal: 'SIGTERM', graceMs });
    await new Promise<void>((resolve) => this.logStream.end(() => resolve()));
  }

  /** Last resort on exit: no waiting. */
  killNow(): void {
    this.stopping = true;
    if (this.child && !hasExited(this.child)) this.child.kill('SIGKILL');
  }
}

export class DevStack implements ChaosStack {
  readonly target = 'dev' as const;
  readonly errors: LoggedError[] = [];
  readonly exits: UnexpectedExit[] = [];
  readonly postgres: ChaosPostgres;
  temporalPort = 0;
  apiPort = 0;
  private temporal: TemporalDevServer | undefined;
  private temporalCli = '';
  private carrier: NodeProcess | undefined;
  private workers: NodeProcess | undefined;
  private api: NodeProcess | undefined;
  private readonly logsDir: string;

  constructor(private readonly options: StackOptions) {
    this.logsDir = path.join(options.dir, 'logs');
    this.postgres = new ChaosPostgres(path.join(options.dir, 'postgres'), options.log);
    mkdirSync(this.logsDir, { recursive: true });
    // As root, PostgreSQL runs as the `postgres` user, which must reach its data dir.
    chmodSync(options.dir, 0o755);
  }

  get databaseUrl(): string {
    return this.postgres.url;
  }

  get temporalAddress(): string {
    return `127.0.0.1:${this.temporalPort}`;
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.apiPort}/v1`;
  }

  noteExit(name: string, how: string): void {
    this.exits.push({ name, how, at: Date.now() });
    this.options.log(`${name} exited unexpectedly (${how}); starting it again`);
  }

  async start(): Promise<void> {
    const log = this.options.log;
    const [pgPort, temporalPort, apiPort] = await Promise.all([freePort(), freePort(), freePort()]);
    this.temporalPort = temporalPort;
    this.apiPort = apiPort;
    log(`starting PostgreSQL (port ${pgPort}) and Temporal (port ${this.temporalPort})`);
    const [, cli] = await Promise.all([this.postgres.start(pgPort), resolveTemporalCli({ log })]);
    this.temporalCli = cli;
    await this.startTemporal();

    const orm = await openOrm(this.databaseUrl, { poolMax: 2 });
    try {
      const applied = await migrate(orm);
      log(`migrations: ${applied.length ? applied.join(', ') : 'up to date'}`);
    } finally {
      await orm.close(true);
    }

    const env = () => this.childEnv();
    this.carrier = new NodeProcess(
      'carrier simulator',
      ['workers/main.ts', 'carrier-simulator'],
      env,
      'workers running',
      undefined,
      path.join(this.logsDir, 'carrier-simulator.log'),
      this,
    );
    this.workers = new NodeProcess(
      'workers',
      ['workers/main.ts', 'service'],
      env,
      'workers running',
      undefined,
      path.join(this.logsDir, 'workers.log'),
      this,
    );
    this.api = new NodeProcess(
      'API',
      ['api/main.ts'],
      env,
      undefined,
      this.apiPort,
      path.join(this.logsDir, 'api.log'),
      this,
    );
    log('starting the carrier simulator, the workers and the API');
    await Promise.all([this.carrier.start(), this.workers.start(), this.api.start()]);
    log(`API on ${this.apiUrl}`);
  }

  private childEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    // Only what the service needs from our environment: nothing may point it at the user's own
    // database, Temporal, language models or data folder.
    for (const name of ['PATH', 'HOME', 'LANG', 'TZ', 'TMPDIR', 'NODE_OPTIONS', 'VOICE_AGENT_CACHE_DIR']) {
      if (process.env[name] !== undefined) env[name] = process.env[name];
    }
    return {
      ...env,
      DATABASE_URL: this.databaseUrl,
      EMBEDDED_PG_PORT: String(this.postgres.port),
      TEMPORAL_ADDRESS: this.temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      PORT: String(this.apiPort),
      HOST: '127.0.0.1',
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      SIM_TIME_SCALE: String(this.options.simTimeScale),
      LOG_LEVEL: 'info',
      VOICE_AGENT_DATA_DIR: path.join(this.options.dir, 'service-data'),
      ...this.options.env,
    };
  }

  private async startTemporal(): Promise<void> {
    this.temporal = await startTemporalDevServer({
      cliPath: this.temporalCli,
      ip: '127.0.0.1',
      port: this.temporalPort,
      headless: true,
      dbFilename: path.join(this.options.dir, 'temporal', 'temporal.sqlite'),
      logFile: path.join(this.logsDir, 'temporal.log'),
      namespace: 'default',
      reuseExisting: false,
      detached: true,
      log: this.options.log,
    });
    const server = this.temporal;
    void server.exited.then(() => {
      if (this.temporal === server && !this.closing) this.noteExit('Temporal dev server', 'exited');
    });
  }

  /** Stops the Temporal dev server (SIGINT) and starts it again on the same port and database file. */
  async restartTemporal(): Promise<string> {
    const start = Date.now();
    const server = this.temporal;
    this.temporal = undefined;
    await server?.stop();
    await this.startTemporal();
    return `Temporal dev server stopped and serving again after ${secondsSince(start)}`;
  }

  /** kill -9 the service's worker process; resolves when its successor runs (about 1 s later). */
  async killWorker(): Promise<string> {
    const start = Date.now();
    const { pid } = await this.workers!.kill9();
    return `workers pid ${pid} killed with SIGKILL; the new process ran its workers after ${secondsSince(start)}`;
  }

  private closing = false;

  /** Stops everything this run started, in npm start's order: API, workers, simulator, Temporal, PostgreSQL. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    for (const [part, graceMs] of [
      [this.api, 20_000],
      [this.workers, 30_000],
      [this.carrier, 30_000],
    ] as const) {
      await part?.stop(graceMs).catch(() => {});
    }
    await this.temporal?.stop().catch(() => {});
    await this.postgres.close();
  }

  /** On an abrupt exit: kill what can be killed without waiting. */
  killNow(): void {
    this.closing = true;
    for (const part of [this.api, this.workers, this.carrier]) part?.killNow();
    this.postgres.killNow();
  }
}

/** Seconds since `start`, one decimal. */
export function secondsSince(start: number): string {
  return `${((Date.now() - start) / 1000).toFixed(1)} s`;
}
