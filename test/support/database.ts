import { randomBytes } from 'node:crypto';
import { ensureDatabase, startLocalPostgres } from '../../db/embedded-postgres.js';
import { migrate, type Orm, openOrm } from '../../db/orm.js';

// Each test file gets a database of its own on the test PostgreSQL server, migrated with the
// committed migrations, so files run in parallel without seeing each other's rows.
// scripts/test.ts starts the server and sets TEST_PG_SERVER_URL, and migrates one database once
// (TEST_PG_TEMPLATE) that each file's database is copied from; a file run on its own
// (`node --import tsx --test test/x.test.ts`) starts the same local test cluster itself.

export interface TestDatabase {
  url: string;
  orm: Orm;
  close(): Promise<void>;
}

let ownServer: { url: string; users: number; stop(): Promise<void> } | undefined;

async function serverUrl(): Promise<string> {
  if (process.env.TEST_PG_SERVER_URL) return process.env.TEST_PG_SERVER_URL;
  if (ownServer) {
    ownServer.users++;
    return ownServer.url;
  }
  const pg = await startLocalPostgres({
    dataDir: '.data/test-postgres',
    port: Number(process.env.TEST_PG_PORT || 54339),
    database: 'postgres',
    ephemeral: true,
  });
  ownServer = { url: pg.url, users: 1, stop: () => pg.stop() };
  return pg.url;
}

async function releaseServer(): Promise<void> {
  if (!ownServer || --ownServer.users > 0) return;
  const server = ownServer;
  ownServer = undefined;
  await server.stop();
}

export async function freshDatabase(): Promise<TestDatabase> {
  const server = await serverUrl();
  const name = `test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const template = process.env.TEST_PG_TEMPLATE;
  await ensureDatabase(server, name, template ? { template } : {});
  const url = server.replace(/\/[^/?]+(\?.*)?$/, `/${name}`);
  const orm = await openOrm(url, { poolMax: 20 });
  // Nothing to do on a copy of the migrated template; a file run on its own migrates here.
  await migrate(orm);
  return {
    url,
    orm,
    async close() {
      await orm.close(true);
      await releaseServer();
    },
  };
}
