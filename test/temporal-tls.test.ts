import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { openOrm } from '../db/orm.js';
import { loadSettings } from '../lib/settings.js';
import { temporalConnectionOptions } from '../lib/temporal-connection.js';
import { ClusterStack } from '../scripts/chaos/cluster-stack.js';
import { ApiClient, createFixture } from './support/api.js';
import { createAgentFixture } from './support/call-fixtures.js';
import { makeTestCertificates, type TestCertificates } from './support/test-certificates.js';

// TEMPORAL_TLS_CA and TEMPORAL_TLS_SERVER_NAME against a real Temporal server with mutual TLS:
// `npm run start:cluster` itself, its Temporal server presenting a certificate of a private CA
// made here with openssl, for a DNS name only (CLUSTER_TEMPORAL_TLS_CERT/KEY), and asking every
// client for a certificate of that CA. The cluster's own API and worker processes, the namespace
// step (the temporal CLI) and the Web UI connect with the CA, the name and a client certificate,
// and a call placed through the API completes; a connection missing any of them is refused.

const SERVER_NAME = 'temporal.voice-agent.test';

let dir: string;
let certs: TestCertificates;
let cluster: ClusterStack;

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-tls-'));
  // As root PostgreSQL runs as its own user, which must reach its data folder inside.
  chmodSync(dir, 0o755);
  certs = makeTestCertificates(dir, SERVER_NAME);
  cluster = new ClusterStack({
    dir: path.join(dir, 'cluster'),
    simTimeScale: 0.01,
    apiProcesses: 1,
    workerProcesses: 'calls=1,webhooks=1,carrier-simulator=1',
    env: {
      CLUSTER_TEMPORAL_TLS_CERT: certs.server.cert,
      CLUSTER_TEMPORAL_TLS_KEY: certs.server.key,
      TEMPORAL_TLS_CA: certs.ca.cert,
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
      TEMPORAL_TLS_CERT: certs.client.cert,
      TEMPORAL_TLS_KEY: certs.client.key,
    },
    log: () => {},
  });
  await cluster.start();
});

after(async () => {
  await cluster?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The settings of a process of the service that reaches the cluster's server: every TLS setting. */
function mutualTls(overrides: Record<string, string | undefined> = {}) {
  return loadSettings({
    TEMPORAL_ADDRESS: cluster.temporalAddress,
    TEMPORAL_TLS_CERT: certs.client.cert,
    TEMPORAL_TLS_KEY: certs.client.key,
    TEMPORAL_TLS_CA: certs.ca.cert,
    TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
    ...overrides,
  });
}

describe('start:cluster with its Temporal server on mutual TLS from a private CA', {
  timeout: 600_000,
}, () => {
  test("the cluster's processes connect with TEMPORAL_TLS_CA and TEMPORAL_TLS_SERVER_NAME: a call placed through its API completes", async () => {
    const orm = await openOrm(cluster.databaseUrl);
    const owner = await createFixture(orm, { requestsPerSecond: 1000 });
    const agent = await createAgentFixture(orm, { workspaceId: owner.workspaceId });
    await orm.close(true);
    const api = new ApiClient(cluster.apiUrl.replace(/\/v1$/, ''), owner.secret);
    const placed = await api.post('/calls', { agent_id: agent.agentId, to: '+4790005678' });
    assert.equal(placed.status, 202, placed.text);
    let call = placed.body;
    for (const deadline = Date.now() + 90_000; !['completed', 'failed'].includes(call.status); ) {
      assert.ok(Date.now() < deadline, `the call did not end: ${JSON.stringify(call)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      call = (await api.get(`/calls/${placed.body.id}`)).body;
    }
    assert.equal(call.status, 'completed', JSON.stringify(call));

    // The service's client and the workers' native connection, with the same settings.
    const options = temporalConnectionOptions(mutualTls());
    const connection = await Connection.connect({ ...options, connectTimeout: 10_000 });
    try {
      const namespaces = await connection.workflowService.listNamespaces({});
      assert.ok(namespaces.namespaces.some((n) => n.namespaceInfo?.name === 'default'));
    } finally {
      await connection.close();
    }
    await (await NativeConnection.connect(options)).close();
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
      ['plaintext', { address: cluster.temporalAddress }],
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
