import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection, WorkflowClient } from '@temporalio/client';
import { chaosModelEnv, startChaosModel } from './chaos-model.js';
import { ApiClient, type KeyedRequest, type KeyedResult, newTally, type Tally } from './client.js';
import { ClusterStack } from './cluster-stack.js';
import { type CallRow, Database, FINAL_STATUSES } from './database.js';
import { WebhookReceiver } from './receiver.js';
import { BURST, CALLEE_MIX, calleeCaseOf, SCENARIOS, type ScenarioDefinition } from './scenarios.js';
import { createWorkspaceFixture, type WorkspaceFixture } from './setup.js';
import { type ChaosStack, DevStack } from './stack.js';

// `npm run chaos`: the service's parts as separate processes (scripts/chaos/stack.ts), a webhook
// receiver, integrators that retry with their Idempotency-Keys, a poller reading calls, and one
// fault per scenario while calls are in flight. Each scenario is judged from the database, the
// receiver's inbox and every answer the clients got (docs/reliability.md says what "right" is).

export interface ChaosOptions {
  /** `dev`: the parts as `npm start` runs them; `cluster`: `npm run start:cluster` (a Temporal server on PostgreSQL, several API and worker processes). */
  target: 'dev' | 'cluster';
  /** The cluster's API_PROCESSES and WORKER_PROCESSES. */
  apiProcesses: number;
  workerProcesses: string;
  /** Calls per scenario (default 100). */
  calls: number;
  scenarios: string[];
  simTimeScale: number;
  /** How long after the fault and the last POST every call must be final. */
  deadlineSeconds: number;
  /** How long to wait for the webhook deliveries to settle once every call is final. */
  settleSeconds: number;
  /** How long after a key's last try late-resend sends it again (more than the 60 s idempotency lock). */
  resendAfterSeconds: number;
  /** How long `receiver-down` keeps the webhook receiver away (the issue's 5 minutes). */
  receiverDownSeconds: number;
  /** A client's retry budget per key. */
  postBudgetSeconds: number;
  /** POSTs in flight at once per scenario. */
  concurrency: number;
  keepData: boolean;
  /** Who the agents are: the scripted agent, or a language model (a local stand-in, scripts/chaos/chaos-model.ts). */
  agent: 'scripted' | 'llm';
  log: (line: string) => void;
}

export const DEFAULT_OPTIONS: Omit<ChaosOptions, 'scenarios' | 'log'> = {
  target: 'dev',
  apiProcesses: 2,
  workerProcesses: 'calls=2,webhooks=2,carrier-simulator=1',
  calls: 100,
  simTimeScale: 0.03,
  deadlineSeconds: 600,
  settleSeconds: 420,
  resendAfterSeconds: 65,
  receiverDownSeconds: 300,
  postBudgetSeconds: 240,
  concurrency: 16,
  keepData: false,
  agent: 'scripted',
};

export interface ScenarioResult {
  name: string;
  summary: string;
  ok: boolean;
  posted: number;
  inFlightAtFault: number | null;
  final: number;
  completed: number;
  failed: number;
  stuck: number;
  keysWithSeveralCalls: number;
  /** Keys without a call: no final answer, an answer refused, a 202 whose call is not there; transcript gaps; events a call lacks. */
  lost: number;
  eventsDoubled: number;
  transcriptLinesDoubled: number;
  webhookEventsMissing: number;
  /** `<status> <code>` → count. */
  serverErrors: Record<string, number>;
  /** 5xx the spec does not allow (500, or 503 without the spec's code). */
  badServerErrors: number;
  unexpectedExits: number;
  badSignatures: number;
  /** late-resend: answers that were not the first answer again. */
  replayMismatches: number | null;
  notes: string[];
  seconds: number;
}

export interface ChaosReport {
  ok: boolean;
  target: 'dev' | 'cluster';
  agent: ChaosOptions['agent'];
  startedAt: string;
  seconds: number;
  calls: number;
  simTimeScale: number;
  cores: number;
  results: ScenarioResult[];
  dataDir: string | undefined;
}

interface KeyRecord {
  fixture: WorkspaceFixture;
  request: KeyedRequest;
  result?: KeyedResult;
}

const activeCleanups = new Set<() => Promise<void>>();

/** Stops every process and removes every folder of the runs under way (Ctrl-C, time limit). */
export async function abortChaos(): Promise<void> {
  await Promise.all([...activeCleanups].map((cleanup) => cleanup().catch(() => {})));
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log;
  const started = Date.now();
  const unknown = options.scenarios.filter((name) => !SCENARIOS.some((s) => s.name === name));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}`);
  const names = [...options.scenarios];
  // late-resend re-sends the keys of the scenarios before it; alone, it gets a control run first.
  const firstResend = names.indexOf('late-resend');
  if (firstResend !== -1 && !names.slice(0, firstResend).some((n) => n !== 'late-resend')) {
    names.splice(firstResend, 0, 'baseline');
  }
  const definitions = names.map((name) => SCENARIOS.find((s) => s.name === name)!);
  const elsewhere = definitions.filter((d) => d.targets && !d.targets.includes(options.target));
  if (elsewhere.length) {
    throw new Error(
      `scenario ${elsewhere.map((d) => d.name).join(', ')} does not run on --target ${options.target}`,
    );
  }

  const dir = mkdtempSync(path.join(os.tmpdir(), 'voice-agent-chaos-'));
  log(`run folder ${dir}`);
  const model = options.agent === 'llm' ? await startChaosModel() : undefined;
  if (model) log(`agents on a language model: the stand-in at ${model.url}`);
  const stackOptions = {
    dir,
    simTimeScale: options.simTimeScale,
    log,
    ...(model ? { env: chaosModelEnv(model) } : {}),
  };
  const stack: ChaosStack =
    options.target === 'cluster'
      ? new ClusterStack({
          ...stackOptions,
          apiProcesses: options.apiProcesses,
          workerProcesses: options.workerProcesses,
        })
      : new DevStack(stackOptions);
  const receiver = new WebhookReceiver();
  let db: Database | undefined;
  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    log('stopping everything');
    await stack.close();
    await receiver.close();
    await model?.close();
    await db?.close().catch(() => {});
    if (!options.keepData) rmSync(dir, { recursive: true, force: true });
    else log(`kept ${dir}`);
  };
  const lastResort = () => {
    stack.killNow();
    if (!options.keepData) rmSync(dir, { recursive: true, force: true });
  };
  activeCleanups.add(cleanup);
  process.on('exit', lastResort);

  const results: ScenarioResult[] = [];
  try {
    await receiver.start();
    await stack.start();
    db = new Database(stack.databaseUrl);
    const fixtures = new Map<string, WorkspaceFixture>();
    for (const [index, definition] of definitions.entries()) {
      if (definition.kind !== 'calls' || fixtures.has(definition.name)) continue;
      fixtures.set(
        definition.name,
        await createWorkspaceFixture({
          databaseUrl: stack.databaseUrl,
          apiUrl: stack.apiUrl,
          receiver,
          label: definition.name,
          index,
        }),
      );
    }
    log(`${fixtures.size} workspaces ready`);

    const earlierKeys: KeyRecord[] = [];
    for (const definition of definitions) {
      log(`--- scenario ${definition.name}`);
      const context: Context = { options, stack, receiver, db, log };
      if (definition.kind === 'resend') {
        results.push(await runLateResend(definition, earlierKeys, context));
      } else {
        const { result, keys } = await runCallScenario(definition, fixtures.get(definition.name)!, context);
        results.push(result);
        earlierKeys.push(...keys);
      }
      const last = results.at(-1)!;
      log(`--- ${definition.name}: ${last.ok ? 'all targets met' : 'TARGET MISSED'} (${last.seconds} s)`);
    }
  } finally {
    await cleanup();
    activeCleanups.delete(cleanup);
    process.off('exit', lastResort);
  }
  return {
    ok: results.length > 0 && results.every((r) => r.ok),
    target: options.target,
    agent: options.agent,
    startedAt: new Date(started).toISOString(),
    seconds: Math.round((Date.now() - started) / 1000),
    calls: options.calls,
    simTimeScale: options.simTimeScale,
    cores: os.availableParallelism(),
    results,
    dataDir: options.keepData ? dir : undefined,
  };
}

interface Context {
  options: ChaosOptions;
  stack: ChaosStack;
  receiver: WebhookReceiver;
  db: Database;
  log: (line: string) => void;
}

function callRequests(fixture: WorkspaceFixture, scenario: string, count: number): KeyRecord[] {
  const run = Date.now().toString(36);
  return Array.from({ length: count }, (_, i) => {
    const callee = CALLEE_MIX[i % CALLEE_MIX.length];
    const key = `chaos-${scenario}-${run}-${i}`;
    return {
      fixture,
      request: {
        key,
        path: '/calls',
        body: {
          agent_id: fixture.agentId,
          to: `+1202${String(i).padStart(4, '0')}${callee.suffix}`,
          // A transfer needs a target (lib/voice-runtime/transfer-target.ts).
          metadata: { key, scenario, callee: callee.label, transfer_to: '+12025550100' },
        },
      },
    };
  });
}

/** Sends every request with its own retries, `concurrency` at a time; `onDone` after each. */
async function postAll(
  items: KeyRecord[],
  client: (item: KeyRecord) => ApiClient,
  options: { concurrency: number; budgetMs: number; onDone?: () => void },
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++];
      item.result = await client(item).postIdempotently(item.request, options.budgetMs);
      options.onDone?.();
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, items.length) }, lane));
}

/** Reads what an integrator's dashboard would, the whole scenario long, so that reads meet the faults too. */
function startPoller(client: ApiClient, sinceIso: string, knownIds: () => string[]): () => Promise<void> {
  let running = true;
  const loop = (async () => {
    while (running) {
      const ids = knownIds();
      const id = ids.length ? ids[Math.floor(Math.random() * ids.length)] : undefined;
      const reads = [
        `/calls?limit=100&created_after=${encodeURIComponent(sinceIso)}`,
        '/me',
        ...(id ? [`/calls/${id}`, `/calls/${id}/transcript`] : []),
      ];
      await Promise.all(reads.map((path) => client.request('GET', path).catch(() => undefined)));
      await sleep(500);
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}

/** Calls not final yet, and keys that have no call yet (their POSTs are still under way). */
async function inFlight(db: Database, fixture: WorkspaceFixture, keys: KeyRecord[]): Promise<number> {
  const calls = await db.calls(fixture.workspaceId);
  const withCall = new Set(calls.map((c) => c.key));
  const notFinal = calls.filter((c) => !FINAL_STATUSES.includes(c.status)).length;
  return notFinal + keys.filter((k) => !withCall.has(k.request.key)).length;
}

/** How the integrators fared: retries, waits for a held key, the longest time to a final answer. */
function postingNote(keys: KeyRecord[], tally: Tally): string {
  const results = keys.map((k) => k.result).filter((r): r is KeyedResult => r !== undefined);
  const retried = results.filter((r) => r.attempts > 1).length;
  const longest = Math.max(0, ...results.map((r) => r.finishedAt - r.firstSentAt)) / 1000;
  const refusals = [...tally.clientErrors].map(([label, n]) => `${n}× ${label}`).join(', ');
  return `POST /calls: ${retried} of ${keys.length} keys needed more than one try; longest time to a final answer ${longest.toFixed(1)} s${refusals ? `; 4xx answers on the way: ${refusals}` : ''}`;
}

/** The machine's 1-minute load average every 5 s, summed up when stopped (the run shares the machine). */
function sampleLoad(): () => string {
  const samples: number[] = [os.loadavg()[0]];
  const timer = setInterval(() => samples.push(os.loadavg()[0]), 5_000);
  return () => {
    clearInterval(timer);
    const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
    return `machine load (1-minute average, ${os.availableParallelism()} cores): mean ${mean.toFixed(1)}, max ${Math.max(...samples).toFixed(1)}`;
  };
}

function idOf(result: KeyedResult | undefined): string | undefined {
  const body = result?.final?.body as { id?: unknown } | undefined;
  return result?.final?.status === 202 && typeof body?.id === 'string' ? body.id : undefined;
}

async function runCallScenario(
  definition: ScenarioDefinition,
  fixture: WorkspaceFixture,
  { options, stack, receiver, db, log }: Context,
): Promise<{ result: ScenarioResult; keys: KeyRecord[] }> {
  const started = Date.now();
  const exitsBefore = stack.exits.length;
  const errorsBefore = stack.errors.length;
  const tally = newTally();
  const client = new ApiClient(stack.apiUrl, fixture.secret, tally);
  const count = definition.name === 'burst' ? Math.max(options.calls, BURST.posts) : options.calls;
  const keys = callRequests(fixture, definition.name, count);
  const budgetMs = options.postBudgetSeconds * 1000;
  const stopPoller = startPoller(client, new Date(started - 1000).toISOString(), () =>
    keys.map((k) => idOf(k.result)).filter((id): id is string => id !== undefined),
  );
  const notes: string[] = [];
  let inFlightAtFault: number | null = null;
  const stopLoad = sampleLoad();
  let stuckAtDeadline: CallRow[] = [];

  try {
    if (definition.name === 'burst') {
      const background = keys.slice(0, count - BURST.posts);
      const burst = keys.slice(count - BURST.posts);
      await postAll(background, () => client, { concurrency: options.concurrency, budgetMs });
      inFlightAtFault = await inFlight(db, fixture, keys);
      log(`burst of ${burst.length} POST /calls with ${inFlightAtFault - burst.length} calls in flight`);
      const posting = postAll(burst, () => client, { concurrency: burst.length, budgetMs });
      const faultStart = Date.now();
      await sleep(BURST.stopAfterMs);
      await stack.postgres.stop();
      await sleep(BURST.downMs);
      await stack.postgres.startAgain();
      notes.push(
        `PostgreSQL stopped ${BURST.stopAfterMs} ms into the burst, down ${BURST.downMs / 1000} s, accepting again after ${((Date.now() - faultStart) / 1000).toFixed(1)} s`,
      );
      await posting;
    } else {
      let done = 0;
      const threshold = Math.ceil(count * 0.8);
      let reached: () => void = () => {};
      const thresholdReached = new Promise<void>((resolve) => {
        reached = resolve;
      });
      const posting = postAll(keys, () => client, {
        concurrency: options.concurrency,
        budgetMs,
        onDone: () => {
          if (++done >= threshold) reached();
        },
      });
      await Promise.race([thresholdReached, posting]);
      inFlightAtFault = await inFlight(db, fixture, keys);
      log(
        `${inFlightAtFault} calls in flight (${count - done} POSTs still to answer); fault: ${definition.name}`,
      );
      notes.push(
        await definition.fault!({ stack, receiver, receiverDownSeconds: options.receiverDownSeconds, log }),
      );
      await posting;
    }
    log('every POST answered; waiting for every call to end');
    const allFinal = await waitUntil(
      async () => (await db.notFinal(fixture.workspaceId)) === 0,
      options.deadlineSeconds * 1000,
      async () => `${await db.notFinal(fixture.workspaceId)} calls not final yet`,
      log,
    );
    if (!allFinal) {
      // Stuck is judged here, at the deadline; what they were doing is asked of Temporal now.
      stuckAtDeadline = (await db.calls(fixture.workspaceId)).filter(
        (c) => !FINAL_STATUSES.includes(c.status),
      );
      notes.push(
        `${stuckAtDeadline.length} calls not final ${options.deadlineSeconds} s after the fault and the last POST`,
        ...(await describeStuck(stack.temporalAddress, stuckAtDeadline.slice(0, 10))),
      );
    }
    log('waiting for the webhook deliveries to settle');
    await waitUntil(
      async () => webhooksSettled(db, receiver, fixture),
      Math.max(options.settleSeconds, definition.minSettleSeconds ?? 0) * 1000,
      async () =>
        `${(await missingAtReceiver(db, receiver, fixture)).length} events not received yet, ${await callsWithoutTheirEvents(db, fixture)} final calls without all their events`,
      log,
    );
  } finally {
    await stopPoller();
  }

  // ---- judging
  notes.push(postingNote(keys, tally), stopLoad());
  const calls = await db.calls(fixture.workspaceId);
  const byKey = groupBy(calls, (c) => c.key ?? '(none)');
  const byId = new Map(calls.map((c) => [c.id, c]));
  const several = [...byKey.entries()].filter(([, list]) => list.length > 1);
  for (const [key, list] of several.slice(0, 10)) {
    notes.push(`key ${key} has ${list.length} calls: ${list.map((c) => c.id).join(', ')}`);
  }

  const lostDetails: string[] = [];
  let outcomeUnknown = 0;
  for (const item of keys) {
    const result = item.result;
    const final = result?.final;
    if (!result || !final || result.gaveUp) {
      lostDetails.push(
        `key ${item.request.key}: no final answer after ${result?.attempts ?? 0} tries (last: ${final ? `${final.status} ${final.code ?? ''}` : 'network error'})`,
      );
      continue;
    }
    if (final.status === 202) {
      const call = byId.get(idOf(result)!);
      if (!call || call.key !== item.request.key) {
        lostDetails.push(
          `key ${item.request.key}: answered 202 with call ${idOf(result)}, which is not in the database`,
        );
      }
    } else if (final.code === 'call_outcome_unknown') {
      outcomeUnknown++;
    } else {
      lostDetails.push(`key ${item.request.key}: refused ${final.status} ${final.code ?? ''}`);
    }
  }
  if (outcomeUnknown) {
    const found = keys.filter(
      (k) => k.result?.final?.code === 'call_outcome_unknown' && byKey.has(k.request.key),
    );
    notes.push(
      `${outcomeUnknown} keys answered 503 call_outcome_unknown (stored; the spec's client looks the call up): ${found.length} of them have a call`,
    );
  }

  const finalCalls = calls.filter((c) => FINAL_STATUSES.includes(c.status));
  const notFinalNow = calls.filter((c) => !FINAL_STATUSES.includes(c.status));
  if (stuckAtDeadline.length) {
    notes.push(
      `of the ${stuckAtDeadline.length} calls stuck at the deadline, ${stuckAtDeadline.length - notFinalNow.length} were final when the results were read, after the webhook wait`,
    );
  }

  // Events: one of each type a call's course calls for, never two.
  const events = await db.events(fixture.workspaceId);
  const eventsByCall = groupBy(events, (e) => e.call_id ?? '(none)');
  let eventsDoubled = 0;
  for (const call of finalCalls) {
    const types = (eventsByCall.get(call.id) ?? []).map((e) => e.type);
    const has = (type: string) => types.filter((t) => t === type).length;
    const missing = expectedEventTypes(call).filter((t) => has(t) === 0);
    const doubled = types.length - new Set(types).size;
    const conflicting = has('call.completed') > 0 && has('call.failed') > 0 ? 1 : 0;
    eventsDoubled += doubled + conflicting;
    if (missing.length)
      lostDetails.push(`call ${call.id} (${call.status}) has no ${missing.join(', ')} event`);
    if (doubled || conflicting) notes.push(`call ${call.id} has events ${types.join(', ')}`);
  }

  // The receiver: every event id at least once; never two ids for one call and type.
  const inbox = receiver.inbox(fixture.inboxPath);
  const missingAtRx = events.filter((e) => !inbox.events.has(e.id));
  const received = [...inbox.events.values()];
  const receivedTwiceForOneType = [...groupBy(received, (e) => `${e.callId} ${e.type}`).values()].filter(
    (list) => list.length > 1,
  );
  eventsDoubled += receivedTwiceForOneType.length;
  const redelivered = received.filter((e) => e.count > 1).length;
  const unknownAtRx = received.filter((e) => !events.some((row) => row.id === e.id)).length;
  if (missingAtRx.length) {
    const deliveries = new Map((await db.deliveries(fixture.endpointId)).map((d) => [d.event_id, d]));
    const states = new Map<string, number>();
    for (const event of missingAtRx) {
      const d = deliveries.get(event.id);
      const state = d
        ? `${d.status} after ${d.attempts} attempts${d.error ? ` (${d.error})` : ''}`
        : 'no delivery row';
      states.set(state, (states.get(state) ?? 0) + 1);
    }
    notes.push(
      `webhook events missing at the receiver: ${[...states].map(([s, n]) => `${n} ${s}`).join('; ')}; e.g. ${missingAtRx
        .slice(0, 3)
        .map((e) => `${e.id} (${e.type}, call ${e.call_id})`)
        .join(', ')}`,
    );
  }
  if (redelivered)
    notes.push(
      `${redelivered} events arrived more than once (at-least-once delivery; receivers drop duplicates by id)`,
    );
  if (unknownAtRx) notes.push(`${unknownAtRx} event ids arrived that are not in the events table`);
  if (inbox.badSignatures) notes.push(`${inbox.badSignatures} deliveries failed the signature check`);

  // Transcripts.
  const doubles = await db.transcriptDoubles(fixture.workspaceId);
  const transcriptLinesDoubled = doubles.reduce((sum, d) => sum + d.n - 1, 0);
  for (const d of doubles.slice(0, 5))
    notes.push(`call ${d.call_id}: ${d.role} line "${d.text}" stored ${d.n} times`);
  const gaps = await db.transcriptGaps(fixture.workspaceId);
  for (const g of gaps)
    lostDetails.push(`call ${g.call_id}: transcript has ${g.lines} lines up to index ${g.last_index}`);

  // How the calls ended compared with what the callee's script makes of them (informative).
  const mismatched = new Map<string, string[]>();
  for (const call of finalCalls) {
    const callee = calleeCaseOf(call.to_number);
    if (!callee || (callee.status === call.status && callee.endReason === call.end_reason)) continue;
    const label = `${callee.label} ended ${call.status}/${call.end_reason}`;
    mismatched.set(label, [...(mismatched.get(label) ?? []), call.id]);
  }
  if (mismatched.size) {
    const sorted = [...mismatched].sort((a, b) => b[1].length - a[1].length);
    notes.push(
      `ended otherwise than the callee's script: ${sorted.map(([l, ids]) => `${ids.length} ${l} (e.g. ${ids[0]})`).join(', ')}`,
    );
  }

  const result = judge({
    target: options.target,
    definition,
    started,
    posted: keys.length,
    inFlightAtFault,
    finalCalls,
    stuck: stuckAtDeadline.length,
    several: several.length,
    lostDetails,
    eventsDoubled,
    transcriptLinesDoubled,
    webhookEventsMissing: missingAtRx.length,
    tally,
    exits: stack.exits.slice(exitsBefore),
    errors: stack.errors.slice(errorsBefore),
    badSignatures: inbox.badSignatures,
    replayMismatches: null,
    notes,
  });
  return { result, keys };
}

async function runLateResend(
  definition: ScenarioDefinition,
  earlier: KeyRecord[],
  { options, stack, db, log }: Context,
): Promise<ScenarioResult> {
  const started = Date.now();
  const exitsBefore = stack.exits.length;
  const errorsBefore = stack.errors.length;
  const tally = newTally();
  const notes: string[] = [];
  const stopLoad = sampleLoad();
  const fixtures = [...new Set(earlier.map((k) => k.fixture))];
  const clients = new Map(fixtures.map((f) => [f, new ApiClient(stack.apiUrl, f.secret, tally)]));
  const callsBefore = new Map<string, number>();
  for (const f of fixtures) callsBefore.set(f.workspaceId, (await db.calls(f.workspaceId)).length);

  const lastTry = Math.max(...earlier.map((k) => k.result?.lastSentAt ?? 0));
  const wait = lastTry + options.resendAfterSeconds * 1000 - Date.now();
  if (wait > 0) {
    log(
      `waiting ${Math.ceil(wait / 1000)} s, until ${options.resendAfterSeconds} s after the last try of any key`,
    );
    await sleep(wait);
  }
  const resent: KeyRecord[] = earlier.map((k) => ({ fixture: k.fixture, request: k.request }));
  log(`re-sending ${resent.length} keys`);
  await postAll(resent, (item) => clients.get(item.fixture)!, {
    concurrency: options.concurrency,
    budgetMs: options.postBudgetSeconds * 1000,
  });

  let mismatches = 0;
  let skipped = 0;
  let same = 0;
  for (const [i, original] of earlier.entries()) {
    const first = original.result;
    const again = resent[i].result;
    if (!first?.final || first.gaveUp) {
      skipped++;
      continue;
    }
    const a = first.final;
    const b = again?.final;
    const equal =
      b !== undefined &&
      b.status === a.status &&
      b.replayed &&
      (a.status === 202 ? idOf(first) === idOf(again) : b.code === a.code);
    if (equal) {
      same++;
      continue;
    }
    mismatches++;
    if (mismatches <= 10) {
      notes.push(
        `key ${original.request.key}: first ${a.status} ${a.code ?? idOf(first) ?? ''}, again ${b ? `${b.status} ${b.code ?? idOf(again) ?? ''}${b.replayed ? ' (replayed)' : ' (not replayed)'}` : 'no answer'}`,
      );
    }
  }
  if (skipped) notes.push(`${skipped} keys had no final first answer and were not compared`);
  notes.push(stopLoad());

  let several = 0;
  for (const f of fixtures) {
    const calls = await db.calls(f.workspaceId);
    const added = calls.length - callsBefore.get(f.workspaceId)!;
    if (added) notes.push(`${added} new calls in workspace ${f.label} after the re-send`);
    for (const [key, list] of groupBy(calls, (c) => c.key ?? '(none)')) {
      if (list.length < 2) continue;
      several++;
      notes.push(`key ${key} has ${list.length} calls: ${list.map((c) => c.id).join(', ')}`);
    }
  }
  notes.unshift(
    `${resent.length} keys of ${fixtures.map((f) => f.label).join(', ')} re-sent ${Math.round((Date.now() - lastTry) / 1000)} s after the last try; ${same} answered with the first answer, replayed`,
  );

  return judge({
    target: options.target,
    definition,
    started,
    posted: resent.length,
    inFlightAtFault: null,
    finalCalls: [],
    stuck: 0,
    several,
    lostDetails: [],
    eventsDoubled: 0,
    transcriptLinesDoubled: 0,
    webhookEventsMissing: 0,
    tally,
    exits: stack.exits.slice(exitsBefore),
    errors: stack.errors.slice(errorsBefore),
    badSignatures: 0,
    replayMismatches: mismatches,
    notes,
    final: same,
  });
}

function judge(input: {
  definition: ScenarioDefinition;
  target: 'dev' | 'cluster';
  started: number;
  posted: number;
  inFlightAtFault: number | null;
  finalCalls: CallRow[];
  stuck: number;
  several: number;
  lostDetails: string[];
  eventsDoubled: number;
  transcriptLinesDoubled: number;
  webhookEventsMissing: number;
  tally: Tally;
  exits: { name: string; how: string }[];
  errors: { process: string; msg: string; detail: string }[];
  badSignatures: number;
  replayMismatches: number | null;
  notes: string[];
  final?: number;
}): ScenarioResult {
  const { tally, notes } = input;
  notes.push(...input.lostDetails.slice(0, 10));
  if (input.lostDetails.length > 10) notes.push(`… and ${input.lostDetails.length - 10} more lost`);
  for (const bad of tally.badServerErrors.slice(0, 10)) {
    notes.push(`${bad.status} ${bad.code ?? '(no code)'} on ${bad.route} (request ${bad.requestId})`);
  }
  if (tally.noRetryAfter) notes.push(`${tally.noRetryAfter} answers 503 without Retry-After`);
  if (tally.networkErrors.size) {
    notes.push(
      `requests that got no HTTP answer: ${[...tally.networkErrors].map(([name, n]) => `${n} ${name}`).join(', ')}`,
    );
  }
  for (const exit of input.exits) notes.push(`${exit.name} exited on its own (${exit.how})`);
  if (input.errors.length) {
    const grouped = new Map<string, number>();
    for (const e of input.errors) {
      const label = `${e.process}: ${e.msg}${e.detail ? ` (${e.detail.slice(0, 120)})` : ''}`;
      grouped.set(label, (grouped.get(label) ?? 0) + 1);
    }
    const top = [...grouped].sort((a, b) => b[1] - a[1]).slice(0, 5);
    notes.push(
      `error log lines: ${input.errors.length}; most frequent: ${top.map(([l, n]) => `${n}× ${l}`).join('; ')}`,
    );
  }
  const result: ScenarioResult = {
    name: input.definition.name,
    summary: (input.target === 'cluster' && input.definition.clusterSummary) || input.definition.summary,
    ok: false,
    posted: input.posted,
    inFlightAtFault: input.inFlightAtFault,
    final: input.final ?? input.finalCalls.length,
    completed: input.finalCalls.filter((c) => c.status === 'completed').length,
    failed: input.finalCalls.filter((c) => c.status === 'failed').length,
    stuck: input.stuck,
    keysWithSeveralCalls: input.several,
    lost: input.lostDetails.length,
    eventsDoubled: input.eventsDoubled,
    transcriptLinesDoubled: input.transcriptLinesDoubled,
    webhookEventsMissing: input.webhookEventsMissing,
    serverErrors: Object.fromEntries([...tally.serverErrors].sort()),
    badServerErrors: tally.badServerErrors.length,
    unexpectedExits: input.exits.length,
    badSignatures: input.badSignatures,
    replayMismatches: input.replayMismatches,
    notes,
    seconds: Math.round((Date.now() - input.started) / 1000),
  };
  result.ok =
    result.stuck === 0 &&
    result.keysWithSeveralCalls === 0 &&
    result.lost === 0 &&
    result.eventsDoubled === 0 &&
    result.transcriptLinesDoubled === 0 &&
    result.webhookEventsMissing === 0 &&
    result.badServerErrors === 0 &&
    result.unexpectedExits === 0 &&
    result.badSignatures === 0 &&
    (result.replayMismatches ?? 0) === 0;
  return result;
}

async function missingAtReceiver(db: Database, receiver: WebhookReceiver, fixture: WorkspaceFixture) {
  const inbox = receiver.inbox(fixture.inboxPath);
  return (await db.events(fixture.workspaceId)).filter((e) => !inbox.events.has(e.id));
}

/** The events a final call's course calls for. */
function expectedEventTypes(call: CallRow): string[] {
  if (call.status === 'failed') return ['call.failed'];
  return ['call.started', 'call.completed', ...(call.transferred_to ? ['call.transferred'] : [])];
}

/** Final calls whose events are not all written yet (a call is final a moment before its last event). */
async function callsWithoutTheirEvents(db: Database, fixture: WorkspaceFixture): Promise<number> {
  const [calls, events] = await Promise.all([db.calls(fixture.workspaceId), db.events(fixture.workspaceId)]);
  const written = new Set(events.map((e) => `${e.call_id} ${e.type}`));
  return calls.filter(
    (c) =>
      FINAL_STATUSES.includes(c.status) && expectedEventTypes(c).some((t) => !written.has(`${c.id} ${t}`)),
  ).length;
}

/**
 * Every final call has its events, and every event was received or nothing more can come (its
 * delivery `failed`). Waited for with a deadline: a call that never gets its event is judged lost.
 */
async function webhooksSettled(
  db: Database,
  receiver: WebhookReceiver,
  fixture: WorkspaceFixture,
): Promise<boolean> {
  if ((await callsWithoutTheirEvents(db, fixture)) > 0) return false;
  const missing = await missingAtReceiver(db, receiver, fixture);
  if (missing.length === 0) return true;
  const deliveries = new Map((await db.deliveries(fixture.endpointId)).map((d) => [d.event_id, d]));
  // An event without a delivery row yet may still be on its way through its fan-out.
  return missing.every((e) => deliveries.get(e.id)?.status === 'failed');
}

async function waitUntil(
  done: () => Promise<boolean>,
  timeoutMs: number,
  progress: () => Promise<string>,
  log: (line: string) => void,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let lastReport = Date.now();
  while (Date.now() < deadline) {
    if (await done()) return true;
    if (Date.now() - lastReport >= 15_000) {
      log(await progress());
      lastReport = Date.now();
    }
    await sleep(1000);
  }
  log(`gave up waiting: ${await progress()}`);
  return false;
}

/** For a call that did not end: what its workflow is doing, from Temporal. */
async function describeStuck(address: string, calls: CallRow[]): Promise<string[]> {
  const lines: string[] = [];
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: 5_000 });
    const client = new WorkflowClient({ connection, namespace: 'default' });
    for (const call of calls) {
      try {
        const description = await client.getHandle(`call-${call.id}`).describe();
        const pending = (description.raw.pendingActivities ?? [])
          .map(
            (a) =>
              `${a.activityType?.name} attempt ${a.attempt}${a.lastFailure?.message ? `: ${a.lastFailure.message}` : ''}`,
          )
          .join('; ');
        lines.push(
          `stuck call ${call.id} (${call.status}, to ${call.to_number}): workflow ${description.status.name}${pending ? `, pending ${pending}` : ''}`,
        );
      } catch (error) {
        lines.push(
          `stuck call ${call.id} (${call.status}, to ${call.to_number}): workflow not found (${(error as Error).message})`,
        );
      }
    }
  } catch (error) {
    lines.push(`could not ask Temporal about the stuck calls: ${(error as Error).message}`);
  } finally {
    await connection?.close();
  }
  return lines;
}

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const list = groups.get(key);
    if (list) list.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
