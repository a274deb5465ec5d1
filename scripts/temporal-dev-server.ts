import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import type { Settings } from '../lib/settings.js';
import { SEARCH_ATTRIBUTES } from '../lib/temporal/search-attributes.js';
import { temporalConnectionOptions } from '../lib/temporal-connection.js';
import { acceptsTcp, freePort, hasExited, stopChild } from './processes.js';
import { resolveTemporalCli } from './temporal-binaries.js';

// The local Temporal dev server (`temporal server start-dev`): frontend, history, matching and
// the Web UI in one process, SQLite-backed. `npm start` runs it persisted under .data/temporal,
// the test harness runs it headless and in memory. When something already answers as Temporal on
// the address (a second `npm start`, or a server the developer runs) it is reused as is.

export interface TemporalDevServer {
  /** host:port of the gRPC frontend. */
  address: string;
  namespace: string;
  /** Where the Web UI is, when this server has one we know of. */
  uiUrl: string | undefined;
  /** False when an already running server was reused (and so is left running by stop()). */
  startedHere: boolean;
  /** The server's own output (only when started here). */
  logFile: string | undefined;
  /** Settles when the server process exits (never, for a reused server). */
  exited: Promise<void>;
  stop(): Promise<void>;
}

export interface TemporalDevServerOptions {
  /** The `temporal` binary; resolved (and provisioned if needed) when unset. */
  cliPath?: string;
  ip?: string;
  port: number;
  /** Web UI port; defaults to port + 1000. Ignored when headless. */
  uiPort?: number;
  headless?: boolean;
  /** SQLite file that keeps workflows across restarts; unset keeps everything in memory. */
  dbFilename?: string;
  namespace?: string;
  /** Reuse a Temporal server that already answers on ip:port (default true). */
  reuseExisting?: boolean;
  /** Where the server's output goes; unset discards it. */
  logFile?: string;
  /** Own process group, so a terminal's Ctrl-C reaches only the parent, which stops it in order. */
  detached?: boolean;
  /** How long to wait for the frontend to answer (default 60 s: first starts create the database). */
  startTimeoutMs?: number;
  log?: (line: string) => void;
}

/** `temporal` search attribute type names → IndexedValueType numbers of the operator API. */
const INDEXED_VALUE_TYPES: Record<string, number> = {
  Text: 1,
  Keyword: 2,
  Int: 3,
  Double: 4,
  Bool: 5,
  Datetime: 6,
  KeywordList: 7,
};

export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const ip = options.ip ?? '127.0.0.1';
  const address = `${ip}:${options.port}`;
  const namespace = options.namespace ?? 'default';
  const uiPort = options.headless ? undefined : (options.uiPort ?? options.port + 1000);
  const log = options.log ?? (() => {});

  if (options.reuseExisting !== false && (await acceptsTcp(ip, options.port))) {
    const connection = await connectOnce(address).catch(() => undefined);
    if (!connection) {
      throw new Error(`${address} is in use by something that does not answer as a Temporal server`);
    }
    try {
      await ensureSearchAttributes(connection, namespace);
    } finally {
      await connection.close();
    }
    log(`Temporal: reusing the server already running at ${address}`);
    const uiUp = uiPort !== undefined && (await acceptsTcp(ip, uiPort));
    return {
      address,
      namespace,
      uiUrl: uiUp ? `http://${ip}:${uiPort}` : undefined,
      startedHere: false,
      logFile: undefined,
      exited: new Promise<void>(() => {}),
      stop: async () => {},
    };
  }

  const cli = options.cliPath ?? (await resolveTemporalCli({ log }));
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(options.port), '--namespace', namespace];
  args.push(...(uiPort === undefined ? ['--headless'] : ['--ui-port', String(uiPort)]));
  if (options.dbFilename) {
    mkdirSync(path.dirname(options.dbFilename), { recursive: true });
    args.push('--db-filename', options.dbFilename);
  }
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES))
    args.push('--search-attribute', `${name}=${type}`);
  args.push('--log-level', 'warn');

  let logFd: number | 'ignore' = 'ignore';
  if (options.logFile) {
    mkdirSync(path.dirname(options.logFile), { recursive: true });
    logFd = openSync(options.logFile, 'a');
  }
  const child = spawn(cli, args, { stdio: ['ignore', logFd, logFd], detached: options.detached ?? false });
  if (typeof logFd === 'number') closeSync(logFd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });

  const stop = () => stopChild(child, { signal: 'SIGINT', graceMs: 15_000 });
  try {
    const connection = await waitUntilServing(address, options.startTimeoutMs ?? 60_000, () => {
      if (spawnError) return spawnError.message;
      return hasExited(child) ? `it exited with ${child.exitCode ?? child.signalCode}` : undefined;
    }).catch((error: Error) => {
      throw new Error(
        `Temporal dev server (${cli}) did not start on ${address}: ${error.message}${tail(options.logFile)}`,
      );
    });
    try {
      // start-dev registers --search-attribute only when it creates the namespace; a persisted
      // database from an older version of the list would otherwise miss the new ones.
      await ensureSearchAttributes(connection, namespace);
    } finally {
      await connection.close();
    }
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    address,
    namespace,
    uiUrl: uiPort === undefined ? undefined : `http://${ip}:${uiPort}`,
    startedHere: true,
    logFile: options.logFile,
    exited,
    stop,
  };
}

/**
 * A headless dev server of this process's own on a free port (for tests): never reuses another
 * server, and tries a new port when another process took the one it picked in the meantime.
 */
export async function startPrivateTemporalDevServer(
  options: Omit<TemporalDevServerOptions, 'port' | 'uiPort' | 'headless' | 'reuseExisting'>,
): Promise<TemporalDevServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort(options.ip);
    try {
      return await startTemporalDevServer({ ...options, port, headless: true, reuseExisting: false });
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}

/** Registers every search attribute of lib/search-attributes.ts that the namespace lacks. */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set([
    ...Object.keys(existing.customAttributes ?? {}),
    ...Object.keys(existing.systemAttributes ?? {}),
  ]);
  const missing = Object.entries(SEARCH_ATTRIBUTES).filter(([name]) => !known.has(name));
  if (missing.length === 0) return;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, INDEXED_VALUE_TYPES[type]])),
  });
}

/**
 * ensureSearchAttributes on the server the settings name, best effort: a server we do not run
 * (Temporal Cloud, for one) may refuse the operator API, and that is said, not fatal.
 */
export async function registerSearchAttributes(
  settings: Pick<Settings, 'temporalAddress' | 'temporalNamespace' | 'temporalTls' | 'temporalApiKey'>,
  say: (line: string) => void,
): Promise<void> {
  try {
    const connection = await Connection.connect({
      ...temporalConnectionOptions(settings),
      connectTimeout: 10_000,
    });
    try {
      await ensureSearchAttributes(connection, settings.temporalNamespace);
    } finally {
      await connection.close();
    }
  } catch (error) {
    say(`Temporal: could not check the search attributes on ${settings.temporalAddress}: ${String(error)}`);
  }
}

async function connectOnce(address: string): Promise<Connection> {
  const connection = await Connection.connect({ address, connectTimeout: 2_000 });
  try {
    await connection.workflowService.getSystemInfo({});
    return connection;
  } catch (error) {
    await connection.close();
    throw error;
  }
}

async function waitUntilServing(
  address: string,
  timeoutMs: number,
  gaveUp: () => string | undefined,
): Promise<Connection> {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'no answer';
  while (Date.now() < deadline) {
    const reason = gaveUp();
    if (reason) throw new Error(reason);
    try {
      return await connectOnce(address);
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    await sleep(250);
  }
  throw new Error(`no answer within ${timeoutMs / 1000} s (${lastError})`);
}

function tail(logFile: string | undefined): string {
  if (!logFile) return '';
  try {
    const lines = readFileSync(logFile, 'utf8').trim().split('\n').slice(-15);
    return `\n--- last lines of ${logFile} ---\n${lines.join('\n')}`;
  } catch {
    return '';
  }
}
