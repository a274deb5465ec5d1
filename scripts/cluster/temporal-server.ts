import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import pg from 'pg';
import type { TemporalTlsSettings } from '../../lib/settings.js';
import { SEARCH_ATTRIBUTES } from '../../lib/temporal/search-attributes.js';
import type { TemporalConnectionOptions } from '../../lib/temporal-connection.js';
import { type PostgresTarget, TEMPORAL_DATABASES } from './temporal-config.js';

// The Temporal side of `npm run start:cluster`: the schema (docker/temporal-schema.sh, the same
// script docker-compose runs), the shard count a database already has, waiting for the server,
// the namespace and search attributes (docker/temporal-namespace.sh), and the Web UI's config.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const SCHEMA_SCRIPT = path.join(ROOT, 'docker', 'temporal-schema.sh');
export const NAMESPACE_SCRIPT = path.join(ROOT, 'docker', 'temporal-namespace.sh');

/** Runs a docker/ script with `sh`, its output appended to logFile; a failure shows its last lines. */
async function runScript(
  script: string,
  env: NodeJS.ProcessEnv,
  logFile: string,
  timeoutMs: number,
): Promise<string> {
  const fd = openSync(logFile, 'a');
  const startedAt = readFileSafe(logFile).length;
  const child = spawn('sh', [script], { env, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => {
    child.once('error', () => resolve(-1));
    child.once('exit', (exitCode) => resolve(exitCode));
  });
  clearTimeout(timer);
  const output = readFileSafe(logFile).slice(startedAt);
  if (code !== 0) {
    const tail = output.trim().split('\n').slice(-15).join('\n');
    throw new Error(
      `${path.relative(ROOT, script)} failed (${code === null ? `killed after ${timeoutMs / 1000} s` : `exit code ${code}`}); log ${logFile}:\n${tail}`,
    );
  }
  return output;
}

function readFileSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Creates Temporal's databases and brings their schemas up to date (safe on every start). */
export async function setUpTemporalSchema(options: {
  sqlTool: string;
  postgres: PostgresTarget;
  logFile: string;
}): Promise<void> {
  const { postgres } = options;
  await runScript(
    SCHEMA_SCRIPT,
    {
      ...process.env,
      TEMPORAL_SQL_TOOL: options.sqlTool,
      POSTGRES_SEEDS: postgres.host,
      DB_PORT: String(postgres.port),
      POSTGRES_USER: postgres.user,
      SQL_PASSWORD: postgres.password,
      DBNAME: TEMPORAL_DATABASES.persistence,
      VISIBILITY_DBNAME: TEMPORAL_DATABASES.visibility,
    },
    options.logFile,
    180_000,
  );
}

/**
 * The history shard count to run with. A database that already has shards keeps its count (the
 * server refuses any other); asking for another one with TEMPORAL_HISTORY_SHARDS is an error that
 * says so.
 */
export async function historyShardCount(options: {
  postgres: PostgresTarget;
  wanted: number;
  wantedExplicitly: boolean;
}): Promise<{ shards: number; existing: boolean }> {
  const { postgres } = options;
  const client = new pg.Client({
    host: postgres.host,
    port: postgres.port,
    user: postgres.user,
    password: postgres.password,
    database: TEMPORAL_DATABASES.persistence,
  });
  client.on('error', () => {});
  await client.connect();
  let existing = 0;
  try {
    // Each shard's row is written when the server first takes it: all of them at the first start.
    const found = await client.query<{ n: string }>(
      `select case when to_regclass('public.shards') is null then 0
              else (select count(*) from shards) end as n`,
    );
    existing = Number(found.rows[0]?.n ?? 0);
  } finally {
    await client.end().catch(() => {});
  }
  if (existing === 0) return { shards: options.wanted, existing: false };
  if (options.wantedExplicitly && existing !== options.wanted) {
    throw new Error(
      `TEMPORAL_HISTORY_SHARDS=${options.wanted}, but Temporal's database was created with ${existing} history shards, ` +
        'and that number can never change. Unset TEMPORAL_HISTORY_SHARDS, or start a new cluster (another data folder ' +
        'or database) and move the work there (README "Production").',
    );
  }
  return { shards: existing, existing: true };
}

/** Polls the frontend until it answers `getSystemInfo` (a started server takes a few seconds). */
export async function waitUntilTemporalServes(
  address: string,
  options: {
    timeoutMs: number;
    gaveUp: () => string | undefined;
    /** A server with TLS: how to reach it (lib/temporal-connection.ts). */
    tls?: TemporalConnectionOptions['tls'];
  },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError = 'no answer';
  while (Date.now() < deadline) {
    const reason = options.gaveUp();
    if (reason) throw new Error(reason);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2_000, tls: options.tls });
      try {
        await connection.workflowService.getSystemInfo({});
        await connection.healthService.check({});
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    await sleep(500);
  }
  throw new Error(
    `Temporal did not answer on ${address} within ${options.timeoutMs / 1000} s (${lastError})`,
  );
}

/**
 * Creates the namespace and registers the search attributes with the project's temporal CLI.
 * Returns whether anything was created (a new namespace or attribute reaches every frontend cache
 * only after the namespace cache refreshes, every 2 s).
 */
export async function registerNamespace(options: {
  cli: string;
  address: string;
  namespace: string;
  logFile: string;
  /** A server with TLS: how the CLI reaches it (its own TEMPORAL_TLS_* variables, cliTlsEnv()). */
  tlsEnv?: NodeJS.ProcessEnv;
}): Promise<boolean> {
  const output = await runScript(
    NAMESPACE_SCRIPT,
    {
      ...process.env,
      TEMPORAL_CLI: options.cli,
      TEMPORAL_ADDRESS: options.address,
      TEMPORAL_NAMESPACE: options.namespace,
      SEARCH_ATTRIBUTES: Object.keys(SEARCH_ATTRIBUTES).join(' '),
      ...options.tlsEnv,
    },
    options.logFile,
    120_000,
  );
  const existed = (output.match(/search attribute \S+ exists/g) ?? []).length;
  const created = !/namespace \S+ exists/.test(output) || existed < Object.keys(SEARCH_ATTRIBUTES).length;
  if (created) await sleep(3_000);
  return created;
}

/** The Web UI server's config (ui-server reads `<dir>/<env>.yaml`; here env `cluster`). */
export function writeUiConfig(options: {
  dir: string;
  uiPort: number;
  temporalAddress: string;
  namespace: string;
  /** A server with TLS: the CA, the name in its certificate, and the UI server's client certificate. */
  tls?: { caFile: string; serverName: string; certFile?: string; keyFile?: string };
}): { args: string[] } {
  const tls = options.tls
    ? `tls:
  caFile: ${JSON.stringify(options.tls.caFile)}
  serverName: ${JSON.stringify(options.tls.serverName)}
  enableHostVerification: true${
    options.tls.certFile
      ? `
  certFile: ${JSON.stringify(options.tls.certFile)}
  keyFile: ${JSON.stringify(options.tls.keyFile ?? '')}`
      : ''
  }
`
    : '';
  writeFileSync(
    path.join(options.dir, 'cluster.yaml'),
    `# Generated by scripts/cluster/temporal-server.ts at every start of \`npm run start:cluster\`.
host: "127.0.0.1"
port: ${options.uiPort}
temporalGrpcAddress: ${JSON.stringify(options.temporalAddress)}
defaultNamespace: ${JSON.stringify(options.namespace)}
enableUi: true
refreshInterval: 0s
showTemporalSystemNamespace: false
disableNewsFetch: true
notifyOnNewVersion: false
# Plain HTTP on the loopback address: the CSRF cookie cannot be a Secure one.
cors:
  cookieInsecure: true
${tls}`,
  );
  return { args: ['--root', '/', '--config', options.dir, '--env', 'cluster', 'start'] };
}

/**
 * The temporal CLI's own variables for a server with TLS, from the service's settings: the CLI
 * reads TEMPORAL_TLS_SERVER_CA_CERT_PATH and TEMPORAL_TLS_CLIENT_*_PATH, not TEMPORAL_TLS_CA and
 * TEMPORAL_TLS_CERT/KEY (TEMPORAL_TLS_SERVER_NAME is the same for both).
 */
export function cliTlsEnv(tls: TemporalTlsSettings | undefined): NodeJS.ProcessEnv {
  if (!tls) return {};
  return {
    TEMPORAL_TLS: 'true',
    ...(tls.caPath ? { TEMPORAL_TLS_SERVER_CA_CERT_PATH: tls.caPath } : {}),
    ...(tls.serverName ? { TEMPORAL_TLS_SERVER_NAME: tls.serverName } : {}),
    ...(tls.clientCert
      ? {
          TEMPORAL_TLS_CLIENT_CERT_PATH: tls.clientCert.certPath,
          TEMPORAL_TLS_CLIENT_KEY_PATH: tls.clientCert.keyPath,
        }
      : {}),
  };
}
