import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { Call, TranscriptEntry } from '../db/entities/index.js';
import { migrate, type Orm, openOrm } from '../db/orm.js';
import { setLimits } from '../lib/accounts.js';
import { answerIncomingPhoneCall } from '../lib/calls/incoming-calls.js';
import { loadSettings } from '../lib/settings.js';
import type { CallerSpeech } from '../lib/temporal/call-messages.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { freePort, stopChild } from '../scripts/processes.js';
import { resolveTemporalCli } from '../scripts/temporal-binaries.js';
import { startTemporalDevServer } from '../scripts/temporal-dev-server.js';
import { createAgentFixture } from '../test/support/call-fixtures.js';
import { type SeenRequest, startChatStandIn } from '../test/support/chat-completions-stand-in.js';
import { benchServer, startBenchCluster } from './bench-cluster.js';
import { countsFrom } from './bench-counts.js';
import { startBenchPostgres } from './bench-database.js';

// Turn latency at scale: for each N in BENCH_TURNS_CONCURRENCY (10,50,100,200,400), N answered
// calls that keep talking at once, BENCH_TURNS_PER_CALL (20) caller lines each, every line
// BENCH_TURNS_GAP_MS (3000) after the agent's answer went out, on BENCH_SERVER (dev: a Temporal
// dev server, one workers/main.ts process, a PostgreSQL of the bench's own; cluster: `npm run
// start:cluster` through bench/bench-cluster.ts).
//
// The caller side is this process, outside the service's: it plays the callers and the language
// model (an OpenAI-compatible stand-in answering after BENCH_TURNS_LLM_DELAY_MS, 300). The calls'
// media gateway is a process of its own, bench/processes/turns-gateway.ts: the gateway's turn loop and
// outbox (media/turn-loop.ts, media/workflow-outbox.ts) without audio, holding the calls' media
// sessions and the workers' control API as media/main.ts does; this process hands it each
// transcribed line. Calls come in as the gateway takes them (answerIncomingPhoneCall with that
// gateway as the call's media gateway). BENCH_TURNS_LOOP=workflow measures the design before the
// turn loop moved: the gateway never takes the turns, each line goes to the call workflow (the
// `callerSpeech` signal) and the agent's words come back on the control API.
//
// Per turn, service-added = the agent's first sentence reaching the voice − the caller's line
// reaching the gateway − the model's own time (its request received → its first sentence
// written), and part by part (HOP_PARTS, for workflow turns from the histories). Also per N:
// machine CPU per turn outside this process and by process, history events and bytes per turn, and
// this process's event-loop lag (the caller side must not be the bottleneck). One JSON line per N:
//   {"bench":"turns","server":…,"turn_loop":…,"concurrent":N,"turns":…,"service_added_p50_ms":…,…}
//
//   npm run bench -- turns     BENCH_TURNS_CONCURRENCY=10,50,100 BENCH_TURNS_PER_CALL=20
//                              BENCH_TURNS_GAP_MS=3000 BENCH_TURNS_LLM_DELAY_MS=300
//   BENCH_SERVER=cluster npm run bench -- turns
//   BENCH_TURNS_LOOP=workflow npm run bench -- turns

const CONCURRENCY = countsFrom('BENCH_TURNS_CONCURRENCY', '10,50,100,200,400');
const TURNS = Number(process.env.BENCH_TURNS_PER_CALL || 20);
const GAP_MS = Number(process.env.BENCH_TURNS_GAP_MS || 3000);
const LLM_DELAY_MS = Number(process.env.BENCH_TURNS_LLM_DELAY_MS || 300);
const SERVER = benchServer();
/**
 * BENCH_TURNS_FAULT=worker-kill|temporal-restart (dev server): a third of the way into each N's
 * conversations, the workers process is killed and started again, or the Temporal dev server is
 * restarted on its file; each N then also checks that every call completed with its transcript
 * whole and no line twice.
 */
const FAULT = ['worker-kill', 'temporal-restart'].includes(process.env.BENCH_TURNS_FAULT ?? '')
  ? (process.env.BENCH_TURNS_FAULT as 'worker-kill' | 'temporal-restart')
  : null;
if (FAULT && SERVER !== 'dev') throw new Error('BENCH_TURNS_FAULT runs on the dev server (BENCH_SERVER=dev)');
let injectFault: (() => Promise<string>) | null = null;
const TARGETS = { concurrent: 100, p50: 30, p99: 100, knee: 250 };
const TOKEN = 'bench-turns-token';
const GREETING = 'Hello, Acme bookings.';
/** The model's answer: a short first sentence, then more (the first sentence leaves alone). */
const FIRST_SENTENCE = 'Certainly.';
const ANSWER = `${FIRST_SENTENCE} Which day and time would suit you best, and for how many people?`;
/** Who takes the turns: the gateway (the design since issue 21) or the call workflow (before it). */
const LOOP = process.env.BENCH_TURNS_LOOP === 'workflow' ? 'workflow' : 'gateway';
/**
 * The parts of service-added, in the order a turn passes them. A turn the workflow takes: the
 * first four; a turn the gateway takes: `gateway` (the line in → the model asked: the turn's
 * reads) and `out`.
 */
const HOP_PARTS = {
  signal: 'caller line at the gateway → signal in the history (the signal RPC)',
  taskWait: 'workflow task: waiting for a worker (schedule-to-start)',
  toModel: 'workflow task started → model asked (activation, the agentTurn step and its reads)',
  gateway: 'gateway turn: caller line in → model asked (its reads, the request)',
  out: 'model answer → first sentence at the voice (sentences; for the workflow, the control request)',
} as const;
type HopPart = keyof typeof HOP_PARTS;

/** A turn that takes longer than this failed. */
const TURN_LIMIT_MS = 60_000;

/** One turn as this process timed it (epoch ms, this machine's clock, as the server's event times). */
interface Turn {
  callId: string;
  /** The caller's line reached the gateway. */
  receivedAt: number;
  /** The model's request received, and its answer started. */
  modelAskedAt: number;
  modelAnsweredAt: number;
  /** The agent's first sentence reached the gateway. */
  firstSentenceAt: number;
}

/** The caller line's model request per tag: received, and its answer started (epoch ms). */
const modelTimes = new Map<string, { askedAt: number; answeredAt: number }>();
/** performance.now() as epoch ms. */
const epoch = (performanceMs: number) => performance.timeOrigin + performanceMs;

const cleanups: (() => Promise<unknown>)[] = [];
const cpuTicksPerMs = 100 / 1000; // USER_HZ

/** Busy CPU time of the whole machine so far, ms (/proc/stat). */
function machineBusyMs(): number {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
  return (user + nice + system + irq + softirq + steal) / cpuTicksPerMs;
}

function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** CPU time so far (ms) of each process on the machine, by pid, with the part of the service it is. */
function processCpu(): Map<number, { part: string; ms: number }> {
  const result = new Map<number, { part: string; ms: number }>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(fields[11]) + Number(fields[12])) / cpuTicksPerMs;
      if (ms === 0) continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      result.set(pid, { part: partOf(pid, command), ms });
    } catch {
      // gone meanwhile
    }
  }
  return result;
}

function partOf(pid: number, command: string): string {
  if (pid === process.pid) return 'bench';
  if (command.includes('workers/main.ts')) return 'workers';
  if (command.includes('bench/processes/turns-gateway.ts')) return 'gateway';
  if (command.includes('api/main.ts')) return 'api';
  // PostgreSQL first: its backends are named after their database (`postgres: temporal temporal …`).
  if (/^postgres|\/bin\/postgres /.test(command)) return 'postgres';
  if (/temporal/.test(command)) return 'temporal';
  return 'other';
}

/** CPU per part of the service between two processCpu() readings, ms. */
function cpuByPart(before: ReturnType<typeof processCpu>, after: ReturnType<typeof processCpu>) {
  const parts: Record<string, number> = {};
  for (const [pid, { part, ms }] of after) {
    parts[part] = (parts[part] ?? 0) + ms - (before.get(pid)?.ms ?? 0);
  }
  return parts;
}

try {
  // The model: answers after LLM_DELAY_MS; its own time is timed here, keyed by the caller's line.
  const standIn = await startChatStandIn(async (request: SeenRequest) => {
    const askedAt = epoch(performance.now());
    await sleep(LLM_DELAY_MS);
    const tag = lineTag(request);
    return {
      kind: 'stream',
      text: ANSWER,
      // The model's part ends when its first sentence and the piece after it are written (a
      // sentence is known to be over at the next character).
      onWritten: (textSoFar) => {
        if (tag && !modelTimes.has(tag) && textSoFar.length > FIRST_SENTENCE.length)
          modelTimes.set(tag, { askedAt, answeredAt: epoch(performance.now()) });
      },
    };
  });
  cleanups.push(() => standIn.close());

  const serviceEnv = {
    VOICE_LLM_URL: standIn.url,
    VOICE_LLM_API_KEY: 'sk-bench',
    VOICE_LLM_MODEL: 'stand-in-model',
    MEDIA_STREAMS_TOKEN: TOKEN,
    MEDIA_CONTROL_TOKEN: `${TOKEN}-control`,
  };
  let databaseUrl: string;
  let temporalAddress: string;
  let namespace: string;
  let prefix: string;
  if (SERVER === 'cluster') {
    const cluster = await startBenchCluster({ simTimeScale: 1, env: serviceEnv });
    cleanups.push(() => cluster.close());
    ({ databaseUrl, temporalAddress, namespace } = cluster);
    prefix = loadSettings({}).taskQueuePrefix;
  } else {
    const pg = await startBenchPostgres('bench_turns');
    cleanups.push(() => pg.stop());
    databaseUrl = pg.url;
    // With a fault to inject, the dev server keeps its state in a file, so a restart goes on where it was.
    const cliPath = process.env.TEMPORAL_CLI_PATH || (await resolveTemporalCli());
    const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-turns-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const temporalOptions = {
      cliPath,
      port: await freePort(),
      headless: true,
      reuseExisting: false,
      ...(FAULT ? { dbFilename: path.join(dataDir, 'temporal.db') } : {}),
    };
    let temporal = await startTemporalDevServer(temporalOptions);
    cleanups.push(() => temporal.stop());
    ({ address: temporalAddress, namespace } = temporal);
    prefix = `bench-turns-${Date.now().toString(36)}-`;
    const migrating = await openOrm(databaseUrl, { poolMax: 2 });
    await migrate(migrating);
    await migrating.close(true);
    // BENCH_WORKERS_NODE_ARGS: node flags for the workers, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
    const nodeArgs = (process.env.BENCH_WORKERS_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const startWorkers = () =>
      spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'workers/main.ts'], {
        env: {
          ...process.env,
          ...serviceEnv,
          DATABASE_URL: databaseUrl,
          TEMPORAL_ADDRESS: temporalAddress,
          TEMPORAL_NAMESPACE: namespace,
          TASK_QUEUE_PREFIX: prefix,
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
    let workers = startWorkers();
    cleanups.push(() => stopChild(workers, { signal: 'SIGTERM', graceMs: 30_000 }));
    if (FAULT)
      injectFault = async () => {
        const start = Date.now();
        if (FAULT === 'worker-kill') {
          workers.kill('SIGKILL');
          workers = startWorkers();
          return `the workers process killed (SIGKILL) and started again`;
        }
        await temporal.stop();
        temporal = await startTemporalDevServer(temporalOptions);
        return `the Temporal dev server stopped and serving again on its file after ${Date.now() - start} ms`;
      };
  }
  const settings = {
    ...loadSettings({}),
    databaseUrl,
    temporalAddress,
    temporalNamespace: namespace,
    taskQueuePrefix: prefix,
  };
  const orm = await openOrm(databaseUrl, { poolMax: 10 });
  cleanups.push(() => orm.close(true));
  const client = new Client({
    connection: await Connection.connect({ address: temporalAddress }),
    namespace,
  });
  cleanups.push(() => client.connection.close());

  // The gateway of these calls: a process of its own running the gateway's turn loop (bench/processes/turns-gateway.ts).
  const gateway = await startBenchGateway({
    ...serviceEnv,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: namespace,
    TASK_QUEUE_PREFIX: prefix,
    BENCH_TURNS_LOOP: LOOP,
  });
  cleanups.push(() => stopChild(gateway.child, { signal: 'SIGTERM', graceMs: 30_000 }));
  const gatewayUrl = gateway.url;
  const toGateway = async (callId: string, what: 'opened' | 'heard' | 'hung-up', body: object = {}) => {
    const response = await fetch(`${gatewayUrl}/bench/calls/${callId}/${what}`, {
      method: 'POST',
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`bench gateway ${what}: ${response.status} ${await response.text()}`);
    return response.json();
  };

  const agent = await createAgentFixture(orm, {
    plan: 'standard',
    name: 'Bench',
    firstMessage: GREETING,
    numbers: Math.max(...CONCURRENCY) + 1,
  });
  await setLimits(orm.em.fork(), {
    workspaceId: agent.workspaceId,
    callsPerMinute: 1_000_000,
    callsPerDay: 1_000_000,
    minutesQuota: 1_000_000,
  });

  /** One call: taken, greeted, TURNS lines each answered, then the person hangs up. */
  const talk = async (
    number: string,
    turns: number,
    startAfterMs: number,
  ): Promise<{ turns: Turn[]; failure?: string; callId?: string }> => {
    await sleep(startAfterMs);
    const answer = await answerIncomingPhoneCall(
      { em: orm.em.fork(), temporal: client, settings },
      { to: number, from: '+4790000000' },
      { mediaGateway: gatewayUrl },
    );
    if (!answer.answered) return { turns: [], failure: `not answered: ${answer.reason}` };
    const t0 = performance.now();
    const measured: Turn[] = [];
    try {
      await toGateway(answer.callId, 'opened');
      let index = 1;
      for (let turn = 0; turn < turns; turn++) {
        await sleep(GAP_MS);
        const tag = `c${answer.callId.slice(0, 8)}t${turn}`;
        const seconds = (performance.now() - t0) / 1000;
        const speech: CallerSpeech = {
          utterance: turn,
          text: `I would like to book a table, please [${tag}].`,
          startedAtSeconds: Math.max(0, seconds - 2),
          endedAtSeconds: seconds,
          speechTiming: { speechEndedAt: Date.now(), transcribedAt: Date.now() },
        };
        const agentIndex = index + 1;
        const heard = (await toGateway(answer.callId, 'heard', { speech, agentIndex })) as {
          receivedAt: number;
          firstSentenceAt: number | null;
          over: boolean;
        };
        if (heard.over || heard.firstSentenceAt === null) throw new Error(`the call ended at turn ${turn}`);
        const model = modelTimes.get(tag);
        if (model !== undefined)
          measured.push({
            callId: answer.callId,
            receivedAt: heard.receivedAt,
            modelAskedAt: model.askedAt,
            modelAnsweredAt: model.answeredAt,
            firstSentenceAt: heard.firstSentenceAt,
          });
        index = agentIndex + 1;
      }
    } catch (error) {
      return { turns: measured, failure: `${error}`, callId: answer.callId };
    } finally {
      await toGateway(answer.callId, 'hung-up', {
        atSeconds: Math.round((performance.now() - t0) / 1000),
      }).catch(() => {});
    }
    return { turns: measured, callId: answer.callId };
  };

  // Warm up: the workflow bundle, the connections, the runtime; not measured.
  console.log(`turns bench on ${SERVER}, turns taken by the ${LOOP}: warm-up call (not measured)`);
  const warm = await talk(agent.numbers.at(-1)!, 2, 0);
  if (warm.failure) throw new Error(`warm-up call failed: ${warm.failure}`);

  const lag = monitorEventLoopDelay({ resolution: 10 });
  const rows: Row[] = [];
  for (const concurrent of CONCURRENCY) {
    lag.reset();
    lag.enable();
    const busyBefore = machineBusyMs();
    const ownBefore = ownCpuMs();
    const processesBefore = processCpu();
    const fault = injectFault
      ? sleep((TURNS * GAP_MS) / 3).then(async () => {
          console.log(`fault: ${await injectFault!()}`);
        })
      : Promise.resolve();
    const results = await Promise.all(
      Array.from({ length: concurrent }, (_, i) => talk(agent.numbers[i], TURNS, Math.random() * GAP_MS)),
    );
    await fault;
    const cpuMs = machineBusyMs() - busyBefore - (ownCpuMs() - ownBefore);
    const byPart = cpuByPart(processesBefore, processCpu());
    lag.disable();
    const turns = results.flatMap((result) => result.turns);
    const failures = results.filter((result) => result.failure);
    for (const failed of failures.slice(0, 5)) console.log(`a call failed: ${failed.failure}`);
    const history = await historyFigures(client, results);
    const whole = FAULT ? await transcriptsWhole(orm, results) : null;
    if (whole) console.log(`after the fault: ${JSON.stringify(whole)}`);
    const row: Row = {
      concurrent,
      turns: turns.length,
      failedCalls: failures.length,
      serviceAdded: turns.map(
        (turn) => turn.firstSentenceAt - turn.receivedAt - (turn.modelAnsweredAt - turn.modelAskedAt),
      ),
      modelMs: turns.map((turn) => turn.modelAnsweredAt - turn.modelAskedAt),
      ...history,
      cpuMsPerTurn: cpuMs / Math.max(1, turns.length),
      cpuMsPerTurnByPart: Object.fromEntries(
        Object.entries(byPart)
          .filter(([part]) => part !== 'bench')
          .map(([part, ms]) => [part, Math.round((ms / Math.max(1, turns.length)) * 10) / 10]),
      ),
      lagP99: lag.percentile(99) / 1e6,
      lagMax: lag.max / 1e6,
    };
    rows.push(row);
    report(row);
    // Let the calls finish (analysis, events) before the next N starts.
    await sleep(5000);
  }
  summary(rows);
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.error(error));
}

interface Row {
  concurrent: number;
  turns: number;
  failedCalls: number;
  serviceAdded: number[];
  modelMs: number[];
  /** service-added, part by part (ms per turn; they add up to it). */
  parts: Record<HopPart, number[]>;
  historyEventsPerTurn: number;
  historyBytesPerTurn: number;
  cpuMsPerTurn: number;
  /** The same by part of the service (workers, temporal, postgres, api, other). */
  cpuMsPerTurnByPart: Record<string, number>;
  lagP99: number;
  lagMax: number;
}

/** The caller line's tag in a model request: its last user message ends with `[tag].`. */
function lineTag(request: SeenRequest): string | undefined {
  const messages = (request.body?.messages ?? []) as { role: string; content: unknown }[];
  const last = [...messages].reverse().find((message) => message.role === 'user');
  return typeof last?.content === 'string' ? /\[(c[0-9a-f]{8}t\d+)\]/.exec(last.content)?.[1] : undefined;
}

/**
 * From the calls' histories: each turn's hop part by part (the events after its `callerSpeech`
 * signal: the workflow task it woke), and the history's cost per turn.
 */
async function historyFigures(client: Client, results: { turns: Turn[]; callId?: string }[]) {
  const parts = Object.fromEntries(Object.keys(HOP_PARTS).map((key) => [key, [] as number[]])) as Record<
    HopPart,
    number[]
  >;
  let events = 0;
  let bytes = 0;
  let turns = 0;
  const ms = (time: unknown) => {
    const t = time as { seconds?: { toNumber(): number } | number; nanos?: number };
    const seconds = typeof t.seconds === 'number' ? t.seconds : (t.seconds?.toNumber() ?? 0);
    return seconds * 1000 + (t.nanos ?? 0) / 1e6;
  };
  const idOf = (id: unknown) => String(id);
  for (const result of results) {
    if (!result.callId) continue;
    const handle = client.workflow.getHandle(callWorkflowId(result.callId));
    await handle.result().catch(() => {});
    const history = await handle.fetchHistory();
    const list = history.events ?? [];
    events += list.length;
    bytes += JSON.stringify(history).length;
    let k = 0;
    for (const [i, event] of list.entries()) {
      const name = event.workflowExecutionSignaledEventAttributes?.signalName;
      if (name !== 'callerSpeech' && name !== 'gatewayTurn') continue;
      turns++;
      const turn = result.turns[k++];
      if (!turn) continue;
      parts.out.push(turn.firstSentenceAt - turn.modelAnsweredAt);
      if (name === 'gatewayTurn') {
        // Taken in the gateway: the signal comes after the answer, off the turn's path.
        parts.gateway.push(turn.modelAskedAt - turn.receivedAt);
        continue;
      }
      const later = list.slice(i + 1);
      const scheduled = later.find((e) => e.workflowTaskScheduledEventAttributes);
      const started = later.find(
        (e) => idOf(e.workflowTaskStartedEventAttributes?.scheduledEventId) === idOf(scheduled?.eventId),
      );
      if (!scheduled || !started) continue;
      const at = { signal: ms(event.eventTime), taskStarted: ms(started.eventTime) };
      parts.signal.push(at.signal - turn.receivedAt);
      parts.taskWait.push(at.taskStarted - at.signal);
      parts.toModel.push(turn.modelAskedAt - at.taskStarted);
    }
  }
  return {
    parts,
    historyEventsPerTurn: events / Math.max(1, turns),
    historyBytesPerTurn: bytes / Math.max(1, turns),
  };
}

function report(row: Row): void {
  const line = (label: string, values: number[]) =>
    console.log(`| ${label} | ${pct(values, 50)} | ${pct(values, 95)} | ${pct(values, 99)} |`);
  console.log(`\n${row.concurrent} concurrent calls, ${TURNS} turns each: ${row.turns} turns measured`);
  if (row.failedCalls) console.log(`${row.failedCalls} of ${row.concurrent} calls failed`);
  console.log('| per turn, ms | p50 | p95 | p99 |');
  console.log('|---|---:|---:|---:|');
  line('service-added (caller line at the gateway → first sentence out, − model)', row.serviceAdded);
  line(`model: asked → first sentence written (stand-in: ${LLM_DELAY_MS} ms, then streamed)`, row.modelMs);
  for (const [key, label] of Object.entries(HOP_PARTS)) {
    if (row.parts[key as HopPart].length) line(`  ${label}`, row.parts[key as HopPart]);
  }
  console.log(
    `CPU per turn (machine, outside the bench process): ${row.cpuMsPerTurn.toFixed(1)} ms; history per turn: ${row.historyEventsPerTurn.toFixed(1)} events, ${Math.round(row.historyBytesPerTurn)} bytes`,
  );
  console.log(`  of it, by process: ${JSON.stringify(row.cpuMsPerTurnByPart)}`);
  console.log(
    `bench process event-loop lag: p99 ${row.lagP99.toFixed(1)} ms, max ${row.lagMax.toFixed(1)} ms`,
  );
  console.log(
    JSON.stringify({
      bench: 'turns',
      server: SERVER,
      turn_loop: LOOP,
      concurrent: row.concurrent,
      turns: row.turns,
      service_added_p50_ms: pct(row.serviceAdded, 50),
      service_added_p95_ms: pct(row.serviceAdded, 95),
      service_added_p99_ms: pct(row.serviceAdded, 99),
      workflow_task_schedule_to_start_p50_ms: pct(row.parts.taskWait, 50),
      workflow_task_schedule_to_start_p99_ms: pct(row.parts.taskWait, 99),
      to_model_p50_ms: pct(row.parts.toModel, 50),
      to_model_p99_ms: pct(row.parts.toModel, 99),
      gateway_to_model_p50_ms: pct(row.parts.gateway, 50),
      gateway_to_model_p99_ms: pct(row.parts.gateway, 99),
      cpu_ms_per_turn: Math.round(row.cpuMsPerTurn * 10) / 10,
      cpu_ms_per_turn_by_process: row.cpuMsPerTurnByPart,
      history_events_per_turn: Math.round(row.historyEventsPerTurn * 10) / 10,
      history_bytes_per_turn: Math.round(row.historyBytesPerTurn),
      bench_lag_p99_ms: Math.round(row.lagP99),
      failed_calls: row.failedCalls,
      ...(FAULT ? { fault: FAULT } : {}),
    }),
  );
}

function summary(rows: Row[]): void {
  const at = rows.find((row) => row.concurrent === TARGETS.concurrent);
  if (at) {
    const p50 = pct(at.serviceAdded, 50);
    const p99 = pct(at.serviceAdded, 99);
    console.log(
      `\ntarget at ${TARGETS.concurrent} concurrent calls: service-added p50 ≤ ${TARGETS.p50} ms ${p50 <= TARGETS.p50 ? 'met' : 'missed'} (${p50} ms), p99 ≤ ${TARGETS.p99} ms ${p99 <= TARGETS.p99 ? 'met' : 'missed'} (${p99} ms)`,
    );
  }
  const knee = rows.find((row) => pct(row.serviceAdded, 99) > TARGETS.knee);
  console.log(
    knee
      ? `knee: p99 passes ${TARGETS.knee} ms at ${knee.concurrent} concurrent calls`
      : `knee: p99 stays under ${TARGETS.knee} ms up to ${rows.at(-1)?.concurrent} concurrent calls`,
  );
}

function pct(values: number[], p: number): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN);
}

/** bench/processes/turns-gateway.ts as a process of its own, once it listens. */
async function startBenchGateway(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/processes/turns-gateway.ts'], {
    env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const line = buffered.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once('exit', (code) => reject(new Error(`bench gateway exited ${code} before it listened`)));
  });
  child.stdout!.resume();
  return { child, url };
}

/**
 * After a fault: every call completed, and its transcript whole (the greeting and two lines a turn
 * the bench measured, each turn's line once: every caller line's tag at one index only).
 */
async function transcriptsWhole(orm: Orm, results: { turns: Turn[]; callId?: string; failure?: string }[]) {
  let notCompleted = 0;
  let linesMissing = 0;
  let linesTwice = 0;
  for (const result of results) {
    if (!result.callId) continue;
    const em = orm.em.fork();
    const call = await em.findOneOrFail(Call, { id: result.callId });
    if (call.status !== 'completed') notCompleted++;
    const lines = await em.find(TranscriptEntry, { call: result.callId }, { orderBy: { index: 'asc' } });
    const callerTags = lines.flatMap((line) =>
      line.role === 'caller' ? [/\[(c[0-9a-f]{8}t\d+)\]/.exec(line.text)?.[1]] : [],
    );
    linesTwice += callerTags.length - new Set(callerTags).size;
    const expected = 1 + 2 * TURNS;
    if (!result.failure) linesMissing += Math.max(0, expected - lines.length);
  }
  return {
    calls: results.length,
    not_completed: notCompleted,
    lines_missing: linesMissing,
    lines_twice: linesTwice,
  };
}
