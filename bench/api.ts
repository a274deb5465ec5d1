import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { createApp } from '../api/app.js';
import { defineRoute } from '../api/http/route.js';
import { allRoutes } from '../api/routes/index.js';
import { listen } from '../api/server.js';
import { startLocalPostgres } from '../db/embedded-postgres.js';
import { migrate, openOrm } from '../db/orm.js';
import { createLogger } from '../lib/logger.js';
import { loadSettings } from '../lib/settings.js';
import { startTracing } from '../lib/tracing/tracing.js';
import { freePort } from '../scripts/processes.js';
import { createFixture } from '../test/support/api.js';

// Throughput and latency of the API's hot paths beside a bare Koa handler measured in the same
// run on the same machine: the ratio is the figure. Load comes from a child process (this file
// run with --load) holding keep-alive connections, so the server's event loop is its own.
//
//   npm run bench -- api     BENCH_SECONDS=3 BENCH_ROUNDS=3 BENCH_CONNECTIONS=32 by default;
//                            BENCH_TRACING=1 traces every request; BENCH_AA=1 turns request
//                            metrics off in both API apps, to show the bench's own bias between
//                            them (docs/performance.md, "Metrics and tracing")
//
// It runs its own throw-away PostgreSQL (.data/bench-postgres, a free port) so test runs sharing
// the test cluster neither disturb the figures nor stop the server mid-run.

const SECONDS = Number(process.env.BENCH_SECONDS || 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);

interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
}

interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  seconds: number;
  connections: number;
}

if (process.argv.includes('--load')) {
  process.once('message', async (spec: LoadSpec) => {
    process.send!(await generateLoad(spec));
    process.exit(0);
  });
} else {
  await main();
}

async function main() {
  // BENCH_TRACING=1: the API traces every request (sampled at 100 %) and exports to a local
  // receiver that discards them, as it would to a collector; the bare Koa handler is not traced.
  if (process.env.BENCH_TRACING === '1') {
    const sink = http.createServer((request, response) => {
      request.resume();
      request.on('end', () => response.end('{}'));
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    sink.unref();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
    startTracing('bench-api');
    console.log('tracing on: every request traced and exported over OTLP/HTTP');
  }
  const db = await benchDatabase();
  const settings = { ...loadSettings(), host: '127.0.0.1', port: 0, logLevel: 'warn' as const };
  const logger = createLogger('warn');
  // GET /v1/bench/agent-snapshot: the whole pipeline (auth, rate limit, scope, validation, JSON)
  // answering a fixed agent without a database read, to tell pipeline cost from query cost.
  let snapshot: unknown;
  const pipelineOnly = defineRoute({
    method: 'GET',
    path: '/bench/agent-snapshot',
    operationId: 'benchAgentSnapshot',
    summary: 'Bench only.',
    scope: 'agents:read',
    responses: { 200: { description: 'Agent' } },
    async handler() {
      return { status: 200, body: snapshot };
    },
  });
  const app = createApp(
    { settings, orm: db.orm, temporal: () => Promise.reject(new Error('no Temporal in this bench')), logger },
    { routes: [...allRoutes, pipelineOnly], requestMetrics: process.env.BENCH_AA !== '1' },
  );
  const api = await listen(app, { host: '127.0.0.1', port: 0 });
  // The same API without request metrics: what counting and timing every request costs.
  const uncounted = await listen(
    createApp(
      {
        settings,
        orm: db.orm,
        temporal: () => Promise.reject(new Error('no Temporal in this bench')),
        logger,
      },
      { routes: [...allRoutes, pipelineOnly], requestMetrics: false },
    ),
    { host: '127.0.0.1', port: 0 },
  );
  const fixture = await createFixture(db.orm, { requestsPerSecond: 1_000_000 });
  const auth = { authorization: `Bearer ${fixture.secret}` };
  const created = await fetch(`${api.url}/v1/agents`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench', system_prompt: 'You answer the phone.' }),
  });
  const agent = (await created.json()) as Record<string, unknown>;
  snapshot = agent;

  const bare = await bareKoa(JSON.stringify(agent));
  const targets: [string, Omit<LoadSpec, 'seconds' | 'connections'>][] = [
    ['bare Koa handler (GET, same JSON)', { url: `${bare.url}/`, method: 'GET', headers: {} }],
    [
      'pipeline only (GET, no database read)',
      { url: `${api.url}/v1/bench/agent-snapshot`, method: 'GET', headers: auth },
    ],
    ['GET /v1/agents/{id}', { url: `${api.url}/v1/agents/${agent.id}`, method: 'GET', headers: auth }],
    [
      'GET /v1/agents/{id}, request metrics off',
      { url: `${uncounted.url}/v1/agents/${agent.id}`, method: 'GET', headers: auth },
    ],
    [
      'POST /v1/agents',
      {
        url: `${api.url}/v1/agents`,
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Load', language: 'en-GB', system_prompt: 'Be brief.' }),
      },
    ],
  ];
  // Rounds interleave the targets, so a burst of other work on the machine hits all of them alike;
  // each figure is the median round.
  const results = new Map<string, LoadResult[]>(targets.map(([label]) => [label, []]));
  for (const [, spec] of targets) await load({ ...spec, seconds: 1, connections: CONNECTIONS }); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, spec] of targets) {
      results.get(label)!.push(await load({ ...spec, seconds: SECONDS, connections: CONNECTIONS }));
    }
  }
  const median = (label: string) => {
    const sorted = [...results.get(label)!].sort((x, y) => x.rps - y.rps);
    return sorted[Math.floor(sorted.length / 2)]!;
  };
  const rows = targets.map(([label]) => [label, median(label)] as const);
  const base = rows[0]![1].rps;
  console.log(
    `\n${CONNECTIONS} keep-alive connections, ${ROUNDS} interleaved rounds of ${SECONDS} s, median round, load from a separate process\n`,
  );
  console.log('| endpoint | req/s | p50 ms | p99 ms | vs bare | statuses (median round) |');
  console.log('|---|---:|---:|---:|---:|---|');
  for (const [label, r] of rows) {
    const ratio = `${((r.rps / base) * 100).toFixed(0)} %`;
    console.log(
      `| ${label} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${ratio} | ${JSON.stringify(r.statuses)} |`,
    );
  }
  const get = median('GET /v1/agents/{id}');
  const target = get.rps >= base / 3;
  console.log(
    `\nauthenticated GET at ${((get.rps / base) * 100).toFixed(0)} % of bare Koa (target ≥ 33 %): ${target ? 'met' : 'NOT met'}`,
  );

  // The cost of request metrics: per round, the two apps' back-to-back figures compared (which
  // cancels the machine's drift between rounds), then the median round.
  const on = results.get('GET /v1/agents/{id}')!;
  const off = results.get('GET /v1/agents/{id}, request metrics off')!;
  const costs = on.map((r, i) => ((off[i]!.rps - r.rps) / off[i]!.rps) * 100).sort((x, y) => x - y);
  const cost = costs[Math.floor(costs.length / 2)]!;
  console.log(
    `request metrics cost ${cost.toFixed(1)} % of the authenticated GET's throughput, median of ${costs.length} paired rounds (${costs.map((c) => c.toFixed(1)).join(', ')}) (target ≤ 5 %): ${cost <= 5 ? 'met' : 'NOT met'}`,
  );

  await api.close();
  await uncounted.close();
  await new Promise((resolve) => bare.server.close(resolve));
  await db.close();
  process.exit(target ? 0 : 1);
}

async function benchDatabase() {
  const port = await freePort();
  const pg = await startLocalPostgres({
    dataDir: '.data/bench-postgres',
    port,
    database: 'bench',
    ephemeral: true,
  });
  const orm = await openOrm(pg.url, { poolMax: 20 });
  await migrate(orm);
  return {
    orm,
    async close() {
      await orm.close(true);
      await pg.stop();
    },
  };
}

async function bareKoa(body: string) {
  const koa = new Koa();
  koa.use((ctx) => {
    ctx.set('X-Request-Id', 'bare');
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = body;
  });
  const server = http.createServer(koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function load(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL(import.meta.url).pathname, ['--load'], { execArgv: ['--import', 'tsx'] });
    child.once('message', (result) => resolve(result as LoadResult));
    child.once('error', reject);
    child.once('exit', (code) => code !== 0 && reject(new Error(`load generator exited with ${code}`)));
    child.send(spec);
  });
}

/** `connections` loops, each sending its next request when the previous answer is in. */
async function generateLoad(spec: LoadSpec): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections });
  const url = new URL(spec.url);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const deadline = performance.now() + spec.seconds * 1000;
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const started = performance.now();
      const req = http.request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: spec.method,
          headers: spec.headers,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - started);
            statuses[res.statusCode!] = (statuses[res.statusCode!] ?? 0) + 1;
            resolve();
          });
        },
      );
      req.on('error', reject);
      req.end(spec.body);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: spec.connections }, async () => {
      while (performance.now() < deadline) await once();
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? 0;
  agent.destroy();
  return {
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50: at(0.5),
    p99: at(0.99),
    statuses,
  };
}
