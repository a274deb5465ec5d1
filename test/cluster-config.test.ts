import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { lowerPriority } from '../lib/process-priority.js';
import { SEARCH_ATTRIBUTES } from '../lib/temporal/search-attributes.js';
import {
  DEFAULT_HISTORY_SHARDS,
  loadClusterSettings,
  parseWorkerProcesses,
} from '../scripts/cluster/settings.js';
import { MAX_RESTART_DELAY_MS, restartDelay, spawnPart } from '../scripts/cluster/supervisor.js';
import { allTemporalPorts, temporalServerConfig } from '../scripts/cluster/temporal-config.js';
import { writeUiConfig } from '../scripts/cluster/temporal-server.js';
import { goToolchainFor } from '../scripts/temporal-server-binaries.js';

// The cheap parts of `npm run start:cluster` (no Go build, no server): its settings, the Temporal
// server config it writes, the restart backoff, and the scripts it shares with docker-compose.

test('WORKER_PROCESSES: the default, custom counts, and the simulator first', () => {
  assert.deepEqual(parseWorkerProcesses(undefined), [
    { worker: 'carrier-simulator', processes: 1 },
    { worker: 'calls', processes: 2 },
    { worker: 'webhooks', processes: 2 },
  ]);
  assert.deepEqual(parseWorkerProcesses('calls=3, webhooks=1,carrier-simulator=0,service=1'), [
    { worker: 'calls', processes: 3 },
    { worker: 'webhooks', processes: 1 },
    { worker: 'service', processes: 1 },
  ]);
});

test('WORKER_PROCESSES: mistakes are refused with the setting named', () => {
  assert.throws(() => parseWorkerProcesses('calls'), /WORKER_PROCESSES: "calls" is not name=count/);
  assert.throws(() => parseWorkerProcesses('billing=1'), /unknown worker "billing"/);
  assert.throws(() => parseWorkerProcesses('calls=1,calls=2'), /given twice/);
  assert.throws(() => parseWorkerProcesses('calls=0'), /runs no worker process/);
});

test('cluster settings: defaults, ports derived from the Temporal port, bad values refused', () => {
  const defaults = loadClusterSettings({});
  assert.equal(defaults.apiProcesses, 2);
  assert.equal(defaults.temporalPort, 7233);
  assert.equal(defaults.uiPort, 8233);
  assert.equal(defaults.postgresPort, 54330);
  assert.equal(defaults.historyShards, DEFAULT_HISTORY_SHARDS);
  const moved = loadClusterSettings({ API_PROCESSES: '3', CLUSTER_TEMPORAL_PORT: '17233' });
  assert.equal(moved.apiProcesses, 3);
  assert.equal(moved.uiPort, 18233);
  assert.throws(
    () => loadClusterSettings({ API_PROCESSES: '0' }),
    /API_PROCESSES must be a whole number of at least 1/,
  );
  assert.throws(() => loadClusterSettings({ CLUSTER_PG_PORT: '70000' }), /CLUSTER_PG_PORT must be a port/);
});

test('CLUSTER_BACKGROUND_NICE: 10 by default, 0 turns it off, outside 0–19 refused by name', () => {
  assert.equal(loadClusterSettings({}).backgroundNice, 10);
  assert.equal(loadClusterSettings({ CLUSTER_BACKGROUND_NICE: '0' }).backgroundNice, 0);
  assert.equal(loadClusterSettings({ CLUSTER_BACKGROUND_NICE: '19' }).backgroundNice, 19);
  assert.throws(
    () => loadClusterSettings({ CLUSTER_BACKGROUND_NICE: '20' }),
    /CLUSTER_BACKGROUND_NICE must be a nice value from 0 to 19/,
  );
  assert.throws(
    () => loadClusterSettings({ CLUSTER_BACKGROUND_NICE: '-5' }),
    /CLUSTER_BACKGROUND_NICE must be a whole number of at least 0/,
  );
});

test("a background part runs at the nice value it is given; the others at the supervisor's own", async () => {
  const sleeper = (nice?: number) =>
    spawnPart({
      command: 'sleep',
      args: ['30'],
      env: process.env,
      cwd: tmpdir(),
      stopSignal: 'SIGTERM',
      graceMs: 1_000,
      ...(nice === undefined ? {} : { nice }),
    });
  const background = sleeper(7);
  const callPath = sleeper();
  try {
    assert.equal(getPriority(background.pid), Math.max(getPriority(), 7));
    assert.equal(getPriority(callPath.pid), getPriority());
  } finally {
    await Promise.all([background.stop(), callPath.stop()]);
  }
  // A part that is gone is no error: there is nothing left to lower.
  assert.doesNotThrow(() => lowerPriority(background.pid, 5));
});

test('the Temporal server config: PostgreSQL (postgres12) for persistence and visibility, shards, ports', () => {
  const yaml = temporalServerConfig({
    postgres: { host: '127.0.0.1', port: 54330, user: 'postgres', password: 'p"w' },
    frontendPort: 17233,
    historyShards: 4,
    dynamicConfigFile: '/repo/docker/temporal-dynamicconfig.yaml',
  });
  const config = parse(yaml);
  assert.equal(config.persistence.numHistoryShards, 4);
  assert.equal(config.persistence.defaultStore, 'default');
  assert.equal(config.persistence.visibilityStore, 'visibility');
  const { default: persistence, visibility } = config.persistence.datastores;
  assert.equal(persistence.sql.pluginName, 'postgres12');
  assert.equal(persistence.sql.databaseName, 'temporal');
  assert.equal(persistence.sql.connectAddr, '127.0.0.1:54330');
  assert.equal(persistence.sql.password, 'p"w');
  assert.equal(visibility.sql.pluginName, 'postgres12');
  assert.equal(visibility.sql.databaseName, 'temporal_visibility');
  assert.equal(config.services.frontend.rpc.grpcPort, 17233);
  assert.equal(config.services.frontend.rpc.httpPort, 17243);
  assert.equal(config.services.history.rpc.grpcPort, 17234);
  assert.equal(config.services.matching.rpc.grpcPort, 17235);
  assert.equal(config.services.worker.rpc.grpcPort, 17239);
  assert.equal(config.clusterMetadata.clusterInformation.active.rpcAddress, '127.0.0.1:17233');
  assert.equal(config.dynamicConfigClient.filepath, '/repo/docker/temporal-dynamicconfig.yaml');
  // Every service binds to the loopback address only.
  for (const service of Object.values(config.services) as { rpc: { bindOnIP: string } }[]) {
    assert.equal(service.rpc.bindOnIP, '127.0.0.1');
  }
  assert.equal(new Set(allTemporalPorts(17233)).size, 9);
  assert.throws(() => temporalServerConfig({ ...baseInput(), frontendPort: 80 }), /between 1324 and 33061/);
  // Membership ports above 32767 do not fit Temporal's smallint column: refused before the server fails.
  assert.throws(
    () => temporalServerConfig({ ...baseInput(), frontendPort: 35_209 }),
    /between 1324 and 33061/,
  );
  assert.doesNotThrow(() => temporalServerConfig({ ...baseInput(), frontendPort: 33_061 }));
});

function baseInput() {
  return {
    postgres: { host: '127.0.0.1', port: 5432, user: 'u', password: 'p' },
    frontendPort: 7233,
    historyShards: 4,
    dynamicConfigFile: '/d.yaml',
  };
}

test('a part that keeps dying is restarted with a doubling delay, capped', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 8].map(restartDelay),
    [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000],
  );
  assert.equal(restartDelay(100), MAX_RESTART_DELAY_MS);
});

test('docker/temporal-namespace.sh registers the search attributes of lib/temporal/search-attributes.ts', () => {
  const script = readFileSync(new URL('../docker/temporal-namespace.sh', import.meta.url), 'utf8');
  const defaults = /ATTRIBUTES="\$\{SEARCH_ATTRIBUTES:-([^}]*)\}"/.exec(script);
  assert.ok(defaults, 'the script has a default attribute list');
  assert.deepEqual(defaults[1].split(' ').sort(), Object.keys(SEARCH_ATTRIBUTES).sort());
});

test('docker/temporal-schema.sh uses the schemas embedded in the SQL tool, plugin postgres12', () => {
  const script = readFileSync(new URL('../docker/temporal-schema.sh', import.meta.url), 'utf8');
  assert.match(script, /--plugin postgres12/);
  assert.match(script, /update-schema --schema-name "postgresql\/v12\/\$which"/);
});

test("the Go build uses the machine's go when it is new enough, else fetches go1.26.10", () => {
  assert.equal(goToolchainFor('go version go1.26.8 linux/amd64'), 'go1.26.10');
  assert.equal(goToolchainFor('go version go1.23.4 linux/amd64'), 'go1.26.10');
  assert.equal(goToolchainFor('go version go1.26.10 linux/amd64'), 'local');
  assert.equal(goToolchainFor('go version go1.27 linux/amd64'), 'local');
  assert.equal(goToolchainFor('something else'), 'go1.26.10');
});

test('the Web UI, which has no sign-in of its own, listens on the loopback address only', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ui-config-'));
  try {
    writeUiConfig({ dir, uiPort: 18233, temporalAddress: '127.0.0.1:17233', namespace: 'default' });
    const config = parse(readFileSync(path.join(dir, 'cluster.yaml'), 'utf8'));
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 18233);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const compose = parse(readFileSync('docker-compose.yml', 'utf8'));
  assert.deepEqual(compose.services['temporal-ui'].ports, ['127.0.0.1:8233:8080']);
});
