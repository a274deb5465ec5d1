import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Call } from '../../db/entities/index.js';
import { openOrm } from '../../db/orm.js';
import { mediaGatewayPorts } from '../cluster/settings.js';
import { acceptsTcp } from '../processes.js';
import { ClusterStack } from './cluster-stack.js';
import { WebhookReceiver } from './receiver.js';
import { createWorkspaceFixture, type WorkspaceFixture } from './setup.js';

// `npm run chaos -- --media`: the media half's faults (issue 32, telephony spec sections 4 and 5;
// docs/reliability.md, "Media faults") on `npm run start:cluster` itself, with calls that talk:
// the cluster runs with the local speech server, two media gateways and its own S3 store
// (RECORDINGS_STORE=s3), so every call placed carries audio through a gateway, its far end the
// speaking simulator (Piper's voice into the stream, Whisper and Silero hearing it), and every
// recording goes to the store. Per scenario, N calls are placed and, once they talk, one part is
// broken from outside, as an operator or the kernel would:
//
//   gateway-kill     kill -9 of media gateway #1: each of its calls ends within 15 s as
//                    agent_error, its recording readable (the restarted gateway uploads what the
//                    dead one left); the other gateway's calls go on
//   rolling-restart  SIGUSR2 to start:cluster: the gateways restart one at a time, each draining
//                    its calls first: no call dropped
//   speech-kill      kill -9 of the local speech server: its supervisor starts it again; the calls
//                    go on talking within 30 s
//   store-down       the S3 store frozen (SIGSTOP) for 60 s while calls end: their recordings wait
//                    and are uploaded once it is back, none lost
//
// Then every call must be final (none stuck) and every recording readable through the API.

export const MEDIA_SCENARIOS = ['gateway-kill', 'rolling-restart', 'speech-kill', 'store-down'] as const;
type MediaScenarioName = (typeof MEDIA_SCENARIOS)[number];

export interface MediaChaosOptions {
  calls: number;
  scenarios: MediaScenarioName[];
  simTimeScale: number;
  keepData: boolean;
  log: (line: string) => void;
}

export interface MediaScenarioResult {
  name: MediaScenarioName;
  fault: string;
  calls: number;
  /** Calls on the part broken (gateway-kill: on gateway #1), live at the fault. */
  onBrokenPart: number;
  completed: number;
  failed: number;
  endReasons: Record<string, number>;
  stuck: number;
  recordingsReadable: number;
  /** What this scenario's own target measured (gateway-kill: the slowest end after the kill). */
  measured: string;
  pass: boolean;
  notes: string[];
}

/** A call not final this long after the fault is stuck. */
const DEADLINE_MS = 8 * 60_000;
/** Recordings must be readable this long after the last call ended (an upload after a store outage retries with backoff). */
const RECORDINGS_WITHIN_MS = 4 * 60_000;
const GATEWAY_KILL_ENDS_WITHIN_MS = 15_000;
const SPEECH_RECOVERS_WITHIN_MS = 30_000;
const STORE_DOWN_MS = 60_000;

interface CallView {
  id: string;
  status: string;
  end_reason: string | null;
  ended_at: string | null;
  has_recording: boolean;
}

/** The run's cluster, while it runs: what an interrupted run stops (`abortMediaChaos`). */
let running: { stack: ClusterStack; dir: string } | undefined;

/** Stops the run's processes at once (SIGINT, the time limit) and removes its folder. */
export function abortMediaChaos(): void {
  if (!running) return;
  running.stack.killNow();
  rmSync(running.dir, { recursive: true, force: true });
  running = undefined;
}

export async function runMediaChaos(options: MediaChaosOptions): Promise<MediaScenarioResult[]> {
  const { log } = options;
  const dir = mkdtempSync(path.join(tmpdir(), 'chaos-media-'));
  const mediaPort = await freeGatewayBase();
  const stack = new ClusterStack({
    dir,
    simTimeScale: options.simTimeScale,
    log,
    apiProcesses: 1,
    workerProcesses: 'calls=1,webhooks=1,carrier-simulator=1',
    env: {
      VOICE_SPEECH: 'local',
      MEDIA_GATEWAYS: '2',
      MEDIA_PORT: String(mediaPort),
      RECORDINGS_STORE: 's3',
      MEDIA_DRAIN_SECONDS: '300',
    },
  });
  // The speech server's pid: printed by start:cluster each time it is started.
  let speechPid: number | undefined;
  stack.watch((line) => {
    const started = /Local speech server: \S+, pid (\d+)/.exec(line);
    if (started) speechPid = Number(started[1]);
  });
  running = { stack, dir };
  const receiver = new WebhookReceiver();
  const results: MediaScenarioResult[] = [];
  try {
    await receiver.start();
    await stack.start();
    const orm = await openOrm(stack.databaseUrl, { poolMax: 2 });
    try {
      for (const [index, name] of options.scenarios.entries()) {
        const fixture = await createWorkspaceFixture({
          databaseUrl: stack.databaseUrl,
          apiUrl: stack.apiUrl,
          receiver,
          label: `media-${name}`,
          index: 50 + index,
        });
        const api = apiOf(stack.apiUrl, fixture);
        log(`${name}: placing ${options.calls} talking calls`);
        const ids = await placeCalls(api, fixture, options.calls, index);
        await untilTalking(api, ids, log);
        const gatewayOne = `http://127.0.0.1:${mediaGatewayPorts(mediaPort, 0).controlPort}`;
        const pinned = await pinnedTo(orm, ids, gatewayOne);
        const faultAt = Date.now();
        const liveAtFault = (await Promise.all(ids.map((id) => view(api, id)))).filter(
          (v) => v.status === 'in_progress',
        ).length;
        let storeBackAt = 0;
        const notes: string[] = [];
        let fault: string;
        let onBrokenPart = 0;
        switch (name) {
          case 'gateway-kill':
            onBrokenPart = pinned.length;
            fault = await stack.killPart('media gateway #1');
            break;
          case 'rolling-restart': {
            const done = stack.waitForOutput(
              (line) => line === 'media gateways: rolling restart done',
              DEADLINE_MS,
            );
            stack.signalCluster('SIGUSR2');
            await done;
            fault = `SIGUSR2 to start:cluster: both gateways restarted one at a time, in ${seconds(Date.now() - faultAt)}`;
            break;
          }
          case 'speech-kill': {
            const pid = speechPid;
            if (!pid) throw new Error('the local speech server’s pid is not known');
            process.kill(pid, 'SIGKILL');
            await stack.waitForOutput(
              (line) =>
                /Local speech server: \S+, pid (\d+)/.exec(line)?.[1] !== undefined && speechPid !== pid,
              120_000,
            );
            fault = `local speech server (pid ${pid}) killed with SIGKILL; started again after ${seconds(Date.now() - faultAt)} (pid ${speechPid})`;
            break;
          }
          case 'store-down': {
            const pid = stack.pidOf('S3 store');
            if (!pid) throw new Error('the S3 store’s pid is not known');
            process.kill(pid, 'SIGSTOP');
            await sleep(STORE_DOWN_MS);
            process.kill(pid, 'SIGCONT');
            storeBackAt = Date.now();
            fault = `S3 store (pid ${pid}) frozen with SIGSTOP for ${STORE_DOWN_MS / 1000} s, then SIGCONT`;
            break;
          }
        }
        log(`${name}: ${fault}`);
        const views = await untilFinal(api, ids, faultAt + DEADLINE_MS);
        const lastEnd = Math.max(...views.map((v) => (v.ended_at ? Date.parse(v.ended_at) : 0)));
        const readable = await readableRecordings(
          api,
          ids,
          Math.max(lastEnd, Date.now()) + RECORDINGS_WITHIN_MS,
        );
        const endReasons: Record<string, number> = {};
        for (const view of views) {
          const reason = view.end_reason ?? view.status;
          endReasons[reason] = (endReasons[reason] ?? 0) + 1;
        }
        const stuck = views.filter((v) => v.status !== 'completed' && v.status !== 'failed').length;
        const agentErrors = endReasons.agent_error ?? 0;
        let measured: string;
        let own: boolean;
        if (name === 'gateway-kill') {
          const onIt = views.filter((v) => pinned.includes(v.id));
          const slowest = Math.max(
            0,
            ...onIt.map((v) => (v.ended_at ? Date.parse(v.ended_at) : Number.POSITIVE_INFINITY) - faultAt),
          );
          const allAgentError = onIt.every((v) => v.end_reason === 'agent_error');
          const othersFine = views
            .filter((v) => !pinned.includes(v.id))
            .every((v) => v.end_reason !== 'agent_error');
          measured = `its ${onIt.length} calls ended ${allAgentError ? 'agent_error' : 'otherwise too'} within ${seconds(slowest)}; the other gateway's calls: ${othersFine ? 'none agent_error' : 'some agent_error'}`;
          own = onIt.length > 0 && allAgentError && slowest <= GATEWAY_KILL_ENDS_WITHIN_MS && othersFine;
        } else if (name === 'speech-kill') {
          const recovered = await talkedAgainAfter(orm, ids, views, faultAt);
          measured = `calls live at the kill heard again within ${seconds(recovered.slowestMs)} (${recovered.calls} calls); agent_error: ${agentErrors}`;
          own = recovered.slowestMs <= SPEECH_RECOVERS_WITHIN_MS && agentErrors === 0;
        } else if (name === 'store-down') {
          const whileDown = views.filter((v) => {
            const at = v.ended_at ? Date.parse(v.ended_at) : 0;
            return at >= faultAt && at < storeBackAt;
          }).length;
          measured = `${whileDown} calls ended while the store was down, their recordings uploaded once it was back; agent_error: ${agentErrors}`;
          own = agentErrors === 0 && whileDown > 0;
        } else {
          measured = `${liveAtFault} calls live when the restart began; agent_error: ${agentErrors}`;
          own = agentErrors === 0;
        }
        if (readable < ids.length)
          notes.push(`${ids.length - readable} recordings not readable through the API`);
        results.push({
          name,
          fault,
          calls: ids.length,
          onBrokenPart,
          completed: views.filter((v) => v.status === 'completed').length,
          failed: views.filter((v) => v.status === 'failed').length,
          endReasons,
          stuck,
          recordingsReadable: readable,
          measured,
          pass: own && stuck === 0 && readable === ids.length,
          notes,
        });
        log(
          `${name}: ${results.at(-1)!.pass ? 'pass' : 'FAIL'}: ${measured}; recordings ${readable}/${ids.length}`,
        );
      }
    } finally {
      await orm.close(true);
    }
  } finally {
    await stack.close().catch(() => stack.killNow());
    running = undefined;
    await receiver.close?.();
    if (!options.keepData) rmSync(dir, { recursive: true, force: true });
    else log(`run folder kept: ${dir}`);
  }
  return results;
}

/** The run's table for docs/reliability.md. */
export function mediaReport(results: MediaScenarioResult[]): string {
  const rows = results.map((r) =>
    [
      `\`${r.name}\``,
      r.calls,
      r.name === 'gateway-kill' ? r.onBrokenPart : '–',
      `${r.completed + r.failed} (${r.completed} / ${r.failed})`,
      Object.entries(r.endReasons)
        .map(([reason, n]) => `${n}× ${reason}`)
        .join(', '),
      r.stuck,
      `${r.recordingsReadable} / ${r.calls}`,
      r.measured,
      r.pass ? 'pass' : '**fail**',
    ].join(' | '),
  );
  return [
    '| scenario | calls | on the killed gateway | final (completed / failed) | end reasons | stuck | recordings readable | its own target | result |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
    '',
    ...results.flatMap((r) => [`- \`${r.name}\`: ${r.fault}`, ...r.notes.map((note) => `  - ${note}`)]),
  ].join('\n');
}

type Api = (
  method: string,
  pathname: string,
  body?: unknown,
) => Promise<{ status: number; body: unknown; bytes: Buffer }>;

function apiOf(apiUrl: string, fixture: WorkspaceFixture): Api {
  return async (method, pathname, body) => {
    const response = await fetch(`${apiUrl}${pathname}`, {
      method,
      headers: {
        authorization: `Bearer ${fixture.secret}`,
        ...(body ? { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    const json = (response.headers.get('content-type') ?? '').includes('json')
      ? JSON.parse(bytes.toString('utf8') || 'null')
      : null;
    return { status: response.status, body: json, bytes };
  };
}

/** N calls to people who talk (the simulator's default person: four replies, then goodbye). */
async function placeCalls(
  api: Api,
  fixture: WorkspaceFixture,
  count: number,
  scenario: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const to = `+1202${String(scenario * 100 + i).padStart(4, '0')}5000`;
    const placed = await api('POST', '/calls', { agent_id: fixture.agentId, to });
    if (placed.status !== 202)
      throw new Error(`POST /calls answered ${placed.status}: ${JSON.stringify(placed.body)}`);
    ids.push((placed.body as { id: string }).id);
  }
  return ids;
}

async function view(api: Api, id: string): Promise<CallView> {
  return (await api('GET', `/calls/${id}`)).body as CallView;
}

/** Until most calls are answered and talking (at most 3 minutes). */
async function untilTalking(api: Api, ids: string[], log: (line: string) => void): Promise<void> {
  const giveUpAt = Date.now() + 180_000;
  for (;;) {
    const views = await Promise.all(ids.map((id) => view(api, id)));
    const talking = views.filter((v) => v.status === 'in_progress').length;
    if (talking >= Math.ceil(ids.length * 0.8) || Date.now() > giveUpAt) {
      log(`${talking} of ${ids.length} calls talking`);
      // A few turns in: the fault finds them mid-conversation.
      await sleep(8_000);
      return;
    }
    await sleep(1_000);
  }
}

async function pinnedTo(
  orm: Awaited<ReturnType<typeof openOrm>>,
  ids: string[],
  gateway: string,
): Promise<string[]> {
  const rows = await orm.em
    .fork()
    .find(Call, { id: { $in: ids }, mediaGateway: gateway }, { fields: ['id'] });
  return rows.map((row) => row.id);
}

async function untilFinal(api: Api, ids: string[], deadline: number): Promise<CallView[]> {
  for (;;) {
    const views = await Promise.all(ids.map((id) => view(api, id)));
    if (views.every((v) => v.status === 'completed' || v.status === 'failed') || Date.now() > deadline)
      return views;
    await sleep(2_000);
  }
}

/** How many of the calls' recordings the API serves as a WAV file, waiting for late uploads until `deadline`. */
async function readableRecordings(api: Api, ids: string[], deadline: number): Promise<number> {
  const readable = new Set<string>();
  for (;;) {
    for (const id of ids) {
      if (readable.has(id)) continue;
      const answer = await api('GET', `/calls/${id}/recording`);
      if (
        answer.status === 200 &&
        answer.bytes.subarray(0, 4).toString('latin1') === 'RIFF' &&
        answer.bytes.length > 44
      )
        readable.add(id);
    }
    if (readable.size === ids.length || Date.now() > deadline) return readable.size;
    await sleep(5_000);
  }
}

/**
 * For the calls still live at `faultAt` that went on (ended after it by the agent or the person,
 * not `agent_error`): how long until each next had a caller line written, the slowest of them.
 */
async function talkedAgainAfter(
  orm: Awaited<ReturnType<typeof openOrm>>,
  ids: string[],
  views: CallView[],
  faultAt: number,
): Promise<{ calls: number; slowestMs: number }> {
  const live = views.filter((v) => v.ended_at && Date.parse(v.ended_at) > faultAt).map((v) => v.id);
  let slowestMs = 0;
  for (const id of live.filter((x) => ids.includes(x))) {
    const rows = await orm.em
      .getConnection()
      .execute<{ created_at: Date }[]>(
        `select created_at from transcript_entries where call_id = ? and role = 'caller' and created_at > ? order by created_at limit 1`,
        [id, new Date(faultAt)],
      );
    if (rows[0]) slowestMs = Math.max(slowestMs, new Date(rows[0].created_at).getTime() - faultAt);
  }
  return { calls: live.length, slowestMs };
}

/** A MEDIA_PORT whose two gateways' public and control ports are all free. */
async function freeGatewayBase(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 30_000 + Math.floor(Math.random() * 20_000);
    const ports = [0, 1].flatMap((n) => {
      const { port, controlPort } = mediaGatewayPorts(base, n);
      return [port, controlPort];
    });
    const busy = await Promise.all(ports.map((port) => acceptsTcp('127.0.0.1', port, 300)));
    if (!busy.some(Boolean)) return base;
  }
  throw new Error('found no free ports for two media gateways');
}

function seconds(ms: number): string {
  return Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : 'never';
}
