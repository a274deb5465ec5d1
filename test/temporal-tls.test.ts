import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { type LocalPostgres, startLocalPostgres } from '../db/embedded-postgres.js';
import { loadSettings } from '../lib/settings.js';
import { temporalConnectionOptions } from '../lib/temporal-connection.js';
import { allTemporalPorts, temporalServerConfig } from '../scripts/cluster/temporal-config.js';
import { setUpTemporalSchema, waitUntilTemporalServes } from '../scripts/cluster/temporal-server.js';
import { acceptsTcp, freePort, stopChild } from '../scripts/processes.js';
import { resolveServerBinary } from '../scripts/temporal-server-binaries.js';
import { makeTestCertificates, type TestCertificates } from './support/test-certificates.js';

// TEMPORAL_TLS_CA and TEMPORAL_TLS_SERVER_NAME against a real Temporal server with mutual TLS: the
// server start:cluster builds (Temporal 1.32, scripts/temporal-server-binaries.ts), configured by
// scripts/cluster/temporal-config.ts with a frontend certificate from a private CA made here with
// openssl, for a DNS name only. The service's client and the workers' native connection reach it
// with the CA, the name and a client certificate; every connection missing one of them is refused.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER_NAME = 'temporal.voice-agent.test';

let dir: string;
let certs: TestCertificates;
let postgres: LocalPostgres;
let server: ChildProcess | undefined;
let address: string;
let logFile: string;

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-tls-'));
  // As root PostgreSQL runs as its own user, which must reach its data folder inside.
  chmodSync(dir, 0o755);
  certs = makeTestCertificates(dir, SERVER_NAME);
  const pgPort = await freePort();
  const [sqlTool, serverBinary] = await Promise.all([
    resolveServerBinary('sql-tool'),
    resolveServerBinary('server'),
    (async () => {
      postgres = await startLocalPostgres({
        dataDir: path.join(dir, 'postgres'),
        port: pgPort,
        database: 'postgres',
        ephemeral: true,
      });
    })(),
  ]);
  const target = { host: '127.0.0.1', port: pgPort, user: 'postgres', password: 'postgres' };
  await setUpTemporalSchema({ sqlTool, postgres: target, logFile: path.join(dir, 'schema.log') });
  const frontendPort = await freeFrontendPort();
  address = `127.0.0.1:${frontendPort}`;
  const configFile = path.join(dir, 'config.yaml');
  writeFileSync(
    configFile,
    temporalServerConfig({
      postgres: target,
      frontendPort,
      historyShards: 1,
      dynamicConfigFile: path.join(ROOT, 'docker', 'temporal-dynamicconfig.yaml'),
      tls: {
        certFile: certs.server.cert,
        keyFile: certs.server.key,
        caFile: certs.ca.cert,
        serverName: SERVER_NAME,
        clientCaFile: certs.ca.cert,
        systemWorker: { certFile: certs.client.cert, keyFile: certs.client.key },
      },
    }),
  );
  logFile = path.join(dir, 'temporal.log');
  const log = openSync(logFile, 'a');
  server = spawn(serverBinary, ['--config-file', configFile, '--allow-no-auth', 'start'], {
    cwd: dir,
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  await waitUntilTemporalServes(address, {
    timeoutMs: 120_000,
    gaveUp: () =>
      server?.exitCode !== null
        ? `the server exited: ${readFileSync(logFile, 'utf8').slice(-2000)}`
        : undefined,
    tls: temporalConnectionOptions(mutualTls()).tls,
  });
});

after(async () => {
  if (server) await stopChild(server, { signal: 'SIGTERM', graceMs: 15_000 });
  await postgres?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The settings of a process of the service that reaches this server: every TLS setting. */
function mutualTls(overrides: Record<string, string | undefined> = {}) {
  return loadSettings({
    TEMPORAL_ADDRESS: address,
    TEMPORAL_TLS_CERT: certs.client.cert,
    TEMPORAL_TLS_KEY: certs.client.key,
    TEMPORAL_TLS_CA: certs.ca.cert,
    TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
    ...overrides,
  });
}

describe('a Temporal cluster with mutual TLS from a private CA', { timeout: 300_000 }, () => {
  test("the API's client and the workers' native connection reach it with TEMPORAL_TLS_CA and TEMPORAL_TLS_SERVER_NAME", async () => {
    const options = temporalConnectionOptions(mutualTls());
    const connection = await Connection.connect({ ...options, connectTimeout: 10_000 });
    try {
      const info = await connection.workflowService.getSystemInfo({});
      assert.ok(info.serverVersion, 'the server answered over TLS');
      const namespaces = await connection.workflowService.listNamespaces({});
      assert.ok(namespaces.namespaces.some((n) => n.namespaceInfo?.name === 'temporal-system'));
    } finally {
      await connection.close();
    }
    const native = await NativeConnection.connect(options);
    await native.close();
  });

  test('refused: no client certificate, one from another CA, no server name, no CA, or plaintext', async () => {
    const refusals: [string, Parameters<typeof Connection.connect>[0]][] = [
      [
        'no client certificate',
        temporalConnectionOptions(mutualTls({ TEMPORAL_TLS_CERT: undefined, TEMPORAL_TLS_KEY: undefined })),
      ],
      [
        'a client certificate of another CA',
        temporalConnectionOptions(
          mutualTls({ TEMPORAL_TLS_CERT: certs.stranger.cert, TEMPORAL_TLS_KEY: certs.stranger.key }),
        ),
      ],
      [
        "no server name: the address's IP is not in the certificate",
        temporalConnectionOptions(mutualTls({ TEMPORAL_TLS_SERVER_NAME: undefined })),
      ],
      [
        "no CA: the system's roots do not know the private CA",
        temporalConnectionOptions(mutualTls({ TEMPORAL_TLS_CA: undefined })),
      ],
      ['plaintext', { address }],
    ];
    for (const [what, options] of refusals) {
      await assert.rejects(
        (async () => {
          const connection = await Connection.connect({ ...options, connectTimeout: 3_000 });
          try {
            await connection.workflowService.getSystemInfo({});
          } finally {
            await connection.close();
          }
        })(),
        what,
      );
    }
  });
});

/** A frontend port whose derived ports (history, matching, worker, membership) are all free. */
async function freeFrontendPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * 20_000);
    const taken = await Promise.all(allTemporalPorts(port).map((p) => acceptsTcp('127.0.0.1', p, 200)));
    if (!taken.some(Boolean)) return port;
  }
  throw new Error('no free range of ports for the Temporal server');
}
