import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadClusterSettings } from '../cluster/settings.js';
import { allTemporalPorts, MAX_FRONTEND_PORT } from '../cluster/temporal-config.js';
import { acceptsTcp, freePort, hasExited, reservePort, stopChild, waitForTcp } from '../processes.js';
import { ChaosPostgres } from './postgres.js';
import {
  type ChaosStack,
  type LoggedError,
  ROOT,
  type StackOptions,
  secondsSince,
  type UnexpectedExit,
} from './stack.js';

// The chaos run's `cluster` target: `npm run start:cluster` itself (scripts/start-cluster.ts), on
// ports and in a folder of the run's own, with the run's PostgreSQL as its DATABASE_URL, so the
// Temporal server keeps its persistence and visibility databases on that same server (as the
// cluster's embedded one does). The parts are the cluster's: a real Temporal server on PostgreSQL,
// API_PROCESSES API processes sharing one port, WORKER_PROCESSES worker processes per task queue,
// each kept running by the cluster's own supervisor. The run learns the parts' pids from the
// lines start:cluster prints, and breaks them from outside, as an operator (or the kernel) would.

const READY_LINE = 'Press Ctrl-C to stop.';
const PREFIX = '[start:cluster] ';

export interface ClusterStackOptions extends StackOptions {
  apiProcesses: number;
  workerProcesses: string;
  /** More settings for start:cluster and its parts (a bench's language-model stand-in). */
  env?: NodeJS.ProcessEnv;
}

export class ClusterStack implements ChaosStack {
  readonly target = 'cluster' as const;
  readonly errors: LoggedError[] = [];
  readonly exits: UnexpectedExit[] = [];
  readonly postgres: ChaosPostgres;
  private apiPort = 0;
  private temporalPort = 0;
  private child: ChildProcess | undefined;
  private readonly logStream: WriteStream;
  /** The current pid of each part, by the name start:cluster gives it (`API #1`, `workers calls #1`). */
  private readonly pids = new Map<string, number>();
  /** Parts the run broke on purpose: their next "exited unexpectedly" line is not a crash. */
  private readonly expectedExits = new Set<string>();
  private readonly lineWaiters: { test: (line: string) => boolean; resolve: () => void }[] = [];
  /** Who else reads the cluster's lines as they come (the media run: the speech server's pid). */
  private readonly watchers: ((line: string) => void)[] = [];
  private closing = false;

  constructor(private readonly options: ClusterStackOptions) {
    const logs = path.join(options.dir, 'logs');
    mkdirSync(logs, { recursive: true });
    chmodSync(options.dir, 0o755);
    // As start:cluster runs its own PostgreSQL (CLUSTER_BACKGROUND_NICE), below the call path.
    const { backgroundNice } = loadClusterSettings({ ...process.env, ...options.env });
    this.postgres = new ChaosPostgres(path.join(options.dir, 'postgres'), options.log, backgroundNice);
    this.logStream = createWriteStream(path.join(logs, 'cluster.log'), { flags: 'a' });
  }

  get databaseUrl(): string {
    return this.postgres.url;
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.apiPort}/v1`;
  }

  get temporalAddress(): string {
    return `127.0.0.1:${this.temporalPort}`;
  }

  async start(): Promise<void> {
    const log = this.options.log;
    // The Temporal server's ports first, reserved: the ports chosen after them are not among them.
    this.temporalPort = await freeTemporalBase();
    const [pgPort, apiPort] = await Promise.all([freePort(), freePort()]);
    this.apiPort = apiPort;
    log(`starting PostgreSQL (port ${pgPort})`);
    await this.postgres.start(pgPort);
    log(
      `starting npm run start:cluster (Temporal server on port ${this.temporalPort}, ${this.options.apiProcesses} API processes, workers ${this.options.workerProcesses})`,
    );
    const ready = this.waitForLine((line) => line === READY_LINE, 600_000);
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start-cluster.ts'], {
      cwd: ROOT,
      env: this.childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) createInterface({ input: stream }).on('line', (line) => this.onLine(line));
    }
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code, signal) => {
        if (!this.closing) this.noteExit('start:cluster', signal ? `signal ${signal}` : `exit code ${code}`);
        reject(
          new Error(
            `start:cluster exited (${signal ?? code}) before it was ready; see ${this.options.dir}/logs/cluster.log`,
          ),
        );
      }),
    );
    exited.catch(() => {});
    await Promise.race([ready, exited]);
    log(`cluster ready: API ${this.apiUrl}, parts ${[...this.pids.keys()].join(', ')}`);
  }

  private childEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    const passed = [
      'PATH',
      'HOME',
      'LANG',
      'TZ',
      'TMPDIR',
      'NODE_OPTIONS',
      'VOICE_AGENT_CACHE_DIR',
      'CLUSTER_BACKGROUND_NICE',
    ];
    for (const name of passed) {
      if (process.env[name] !== undefined) env[name] = process.env[name];
    }
    return {
      ...env,
      DATABASE_URL: this.postgres.url,
      PORT: String(this.apiPort),
      HOST: '127.0.0.1',
      CLUSTER_TEMPORAL_PORT: String(this.temporalPort),
      CLUSTER_UI_PORT: String(this.temporalPort + 20),
      API_PROCESSES: String(this.options.apiProcesses),
      WORKER_PROCESSES: this.options.workerProcesses,
      TEMPORAL_NAMESPACE: 'default',
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      SIM_TIME_SCALE: String(this.options.simTimeScale),
      LOG_LEVEL: 'info',
      VOICE_AGENT_DATA_DIR: path.join(this.options.dir, 'service-data'),
      ...this.options.env,
    };
  }

  private onLine(line: string): void {
    this.logStream.write(`${line}\n`);
    for (const watcher of this.watchers) watcher(line.startsWith(PREFIX) ? line.slice(PREFIX.length) : line);
    if (line.startsWith(PREFIX)) this.onSupervisorLine(line.slice(PREFIX.length));
    else if (line.startsWith('{')) this.onServiceLine(line);
    for (const waiter of [...this.lineWaiters]) {
      if (waiter.test(line.startsWith(PREFIX) ? line.slice(PREFIX.length) : line)) {
        this.lineWaiters.splice(this.lineWaiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  }

  private onSupervisorLine(text: string): void {
    // "workers calls #1: pid 123 (...)", "API #2: pid 456 (...)", "X: started again, pid 789",
    // "Temporal: server 127.0.0.1:7233 (pid 321), ..."
    const first = /^(.+?): pid (\d+)/.exec(text) ?? /^(.+?): started again, pid (\d+)/.exec(text);
    if (first) this.pids.set(first[1], Number(first[2]));
    const temporal = /^Temporal: server \S+ \(pid (\d+)\)/.exec(text);
    if (temporal) this.pids.set('Temporal server', Number(temporal[1]));
    const exited = /^(.+?) exited unexpectedly \((.+?)\)/.exec(text);
    if (exited) {
      if (this.expectedExits.has(exited[1])) this.expectedExits.delete(exited[1]);
      else this.noteExit(exited[1], exited[2]);
    }
  }

  private onServiceLine(line: string): void {
    let entry: {
      level?: string;
      msg?: string;
      service?: string;
      error?: { message?: string; name?: string };
    };
    try {
      entry = JSON.parse(line);
    } catch {
      return;
    }
    if (entry.level !== 'error') return;
    const detail = entry.error ? `${entry.error.name ?? 'Error'}: ${entry.error.message ?? ''}` : '';
    this.errors.push({ process: entry.service ?? 'cluster', at: Date.now(), msg: entry.msg ?? '', detail });
  }

  private waitForLine(test: (line: string) => boolean, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const index = this.lineWaiters.indexOf(waiter);
        if (index !== -1) this.lineWaiters.splice(index, 1);
        reject(new Error(`start:cluster did not print the expected line within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      const waiter = {
        test,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.lineWaiters.push(waiter);
    });
  }

  noteExit(name: string, how: string): void {
    this.exits.push({ name, how, at: Date.now() });
    this.options.log(`${name} exited unexpectedly (${how})`);
  }

  /** kill -9 of one process of a part; resolves when the supervisor has started it again. */
  private async kill9(part: string, readyLine?: (line: string) => boolean): Promise<string> {
    const pid = this.pids.get(part);
    if (pid === undefined) throw new Error(`the cluster has no part named ${part}`);
    const start = Date.now();
    this.expectedExits.add(part);
    const again = this.waitForLine((line) => line.startsWith(`${part}: started again, pid`), 120_000);
    process.kill(pid, 'SIGKILL');
    await again;
    const restarted = Date.now();
    if (readyLine) await this.waitForLine(readyLine, 120_000).catch(() => {});
    return `${part} (pid ${pid}) killed with SIGKILL; its supervisor started it again after ${((restarted - start) / 1000).toFixed(1)} s (pid ${this.pids.get(part)}), ready after ${secondsSince(start)}`;
  }

  /** Every line the cluster prints from now on (its own without the `[start:cluster] ` prefix). */
  watch(watcher: (line: string) => void): void {
    this.watchers.push(watcher);
  }

  /** Until the cluster prints a line `test` accepts (its own without the prefix). */
  waitForOutput(test: (line: string) => boolean, timeoutMs: number): Promise<void> {
    return this.waitForLine(test, timeoutMs);
  }

  /** kill -9 of a part by the name start:cluster gives it (`media gateway #1`); resolves once it was started again. */
  killPart(part: string, readyLine?: (line: string) => boolean): Promise<string> {
    return this.kill9(part, readyLine);
  }

  /** A signal to start:cluster itself (SIGUSR2: its media gateways restart one at a time). */
  signalCluster(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  /** The current pid of a part, by the name start:cluster gives it. */
  pidOf(part: string): number | undefined {
    return this.pids.get(part);
  }

  killWorker(): Promise<string> {
    return this.kill9('workers calls #1', (line) => line.includes('"msg":"workers running"'));
  }

  killApi = async (): Promise<string> => {
    const what = await this.kill9('API #1');
    if (!(await waitForTcp('127.0.0.1', this.apiPort, { timeoutMs: 60_000 })))
      throw new Error('the API port does not accept connections after the kill');
    return what;
  };

  /** SIGTERM (Temporal's own graceful stop); the cluster's supervisor starts it again a second later. */
  async restartTemporal(): Promise<string> {
    const part = 'Temporal server';
    const pid = this.pids.get(part);
    if (pid === undefined) throw new Error('the Temporal server pid is not known');
    const start = Date.now();
    this.expectedExits.add(part);
    const again = this.waitForLine((line) => line.startsWith(`${part}: started again, pid`), 180_000);
    process.kill(pid, 'SIGTERM');
    await again;
    // Serving again: the frontend port accepts (gRPC comes up last of the server's services).
    while (!(await acceptsTcp('127.0.0.1', this.temporalPort, 500))) await sleep(250);
    return `Temporal server (pid ${pid}) stopped with SIGTERM; started again by its supervisor (pid ${this.pids.get(part)}), accepting after ${secondsSince(start)}`;
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.child && !hasExited(this.child)) {
      // start:cluster stops its parts in order on SIGINT, like Ctrl-C.
      await stopChild(this.child, { signal: 'SIGINT', graceMs: 120_000 });
    }
    await this.postgres.close();
    await new Promise<void>((resolve) => this.logStream.end(() => resolve()));
  }

  killNow(): void {
    this.closing = true;
    // Its 'exit' handler passes SIGTERM on to every part.
    if (this.child && !hasExited(this.child)) this.child.kill('SIGTERM');
    this.postgres.killNow();
  }
}

/**
 * A frontend port whose derived ports (history, matching, worker, membership, Web UI) are all free,
 * and reserved (reservePort): freePort, here and in the suite's other files, does not choose them.
 */
async function freeTemporalBase(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * (MAX_FRONTEND_PORT - 20_000));
    const ports = [...allTemporalPorts(base), base + 20];
    const busy = await Promise.all(ports.map((port) => acceptsTcp('127.0.0.1', port, 300)));
    if (!busy.some(Boolean) && ports.every(reservePort)) return base;
  }
  throw new Error('found no free range of ports for the Temporal server');
}
