import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { openOrm } from '../../db/orm.js';
import { createLogger } from '../../lib/logger.js';
import type { MediaCommand } from '../../lib/media/media-control.js';
import { mediaTaskQueue } from '../../lib/media/media-session.js';
import { loadSettings } from '../../lib/settings.js';
import {
  type CallerSpeech,
  callerSpeechSignal,
  carrierCallbackSignal,
  gatewayTurnSignal,
} from '../../lib/temporal/call-messages.js';
import { voiceRuntimeFromSettings } from '../../lib/voice-runtime/from-settings.js';
import { TurnLoop } from '../../media/turn-loop.js';
import { WorkflowOutbox } from '../../media/workflow-outbox.js';

// The media gateway of bench/turns.ts, without audio: a process of its own that holds the bench's
// calls as media/main.ts holds real ones (their media sessions on its task queue, the workers'
// control API on its port) and runs their turns with the gateway's own code: the turn loop
// (media/turn-loop.ts) and the outbox that tells the call workflow (media/workflow-outbox.ts).
// Where the real gateway hears audio and transcribes it, the bench hands it the transcribed line
// (`POST /bench/calls/{id}/heard`); where it synthesises sentences, this one notes when each
// reached the voice. BENCH_TURNS_LOOP=workflow: it never takes the turns, and every line goes to
// the workflow (the `callerSpeech` signal), as before the turn loop moved.
//
// Started by bench/turns.ts with the service's environment; prints `{"url": …}` once listening.
// (Not a bench itself: bench/run.ts runs the files directly in bench/ only.)

const settings = loadSettings();
const TAKES_TURNS = (process.env.BENCH_TURNS_LOOP || 'gateway') === 'gateway';
const logger = createLogger('warn', { fields: { service: 'bench-gateway' } });
Runtime.install({ logger: new DefaultLogger('WARN') });

interface BenchCall {
  callId: string;
  workflowId: string | null;
  outbox: WorkflowOutbox;
  loop: TurnLoop;
  lastSent: number;
  /** The person's lines, answered here or sent, one after the other. */
  turns: Promise<void>;
  /** Epoch ms: the agent's first sentence per line index, and its whole line. */
  sentences: Map<number, number>;
  lines: Map<number, number>;
  /** The workflow decided who takes the turns (`take_turns` came). */
  turnsDecided: boolean;
  over: boolean;
  waiters: (() => void)[];
}

const orm = await openOrm(settings.databaseUrl!, { poolMax: 20 });
const temporal = new Client({
  connection: await Connection.connect({ address: settings.temporalAddress }),
  namespace: settings.temporalNamespace,
});
const voiceRuntime = voiceRuntimeFromSettings(settings);
const calls = new Map<string, BenchCall>();

function callOf(callId: string): BenchCall {
  const call = calls.get(callId);
  if (call) return call;
  const created: BenchCall = {
    callId,
    workflowId: null,
    outbox: new WorkflowOutbox({ temporal, workflowId: () => created.workflowId, callId, logger }),
    loop: new TurnLoop({
      callId,
      em: () => orm.em.fork() as EntityManager,
      voiceRuntime,
      logger,
      signal: new AbortController().signal,
      carrier: {
        saySentence: async ({ index, seq }) => {
          if (seq === 0 && !created.sentences.has(index)) created.sentences.set(index, Date.now());
          wake(created);
        },
        say: async ({ index, hangUp }) => {
          if (!created.sentences.has(index)) created.sentences.set(index, Date.now());
          created.lines.set(index, Date.now());
          if (hangUp) created.over = true;
          wake(created);
          return { firstAudioAt: Date.now() };
        },
      },
    }),
    lastSent: -1,
    turns: Promise.resolve(),
    sentences: new Map(),
    lines: new Map(),
    turnsDecided: false,
    over: false,
    waiters: [],
  };
  calls.set(callId, created);
  return created;
}

function wake(call: BenchCall): void {
  for (const waiter of call.waiters.splice(0)) waiter();
}

async function until(call: BenchCall, test: () => boolean, limitMs = 60_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`call ${call.callId}: waited ${limitMs} ms`);
    await new Promise<void>((resolve) => {
      call.waiters.push(resolve);
      setTimeout(resolve, 1000);
    });
  }
}

/** A command of the call workflow's carrier, answered as media/call-audio.ts does (without audio). */
function command(call: BenchCall, command: MediaCommand): object {
  switch (command.type) {
    case 'answer':
      call.workflowId = command.callWorkflowId;
      break;
    case 'connect_agent':
      if (command.opening) call.lines.set(command.opening.index, Date.now());
      break;
    case 'sentence':
      if (command.seq === 0 && !call.sentences.has(command.index))
        call.sentences.set(command.index, Date.now());
      break;
    case 'say':
      if (!call.sentences.has(command.index)) call.sentences.set(command.index, Date.now());
      call.lines.set(command.index, Date.now());
      if (command.hangUp) call.over = true;
      wake(call);
      return { firstAudioAt: Date.now() };
    case 'transfer':
    case 'release':
      call.over = true;
      break;
    case 'take_turns':
      call.turnsDecided = true;
      wake(call);
      return { turns: TAKES_TURNS ? call.loop.take(command, call.lastSent) : 'never' };
  }
  wake(call);
  return {};
}

/** The person's transcribed line: answered here while the turns are the gateway's, else sent to the workflow. */
async function heard(call: BenchCall, speech: CallerSpeech, agentIndex: number) {
  const receivedAt = Date.now();
  call.lastSent = speech.utterance;
  call.turns = call.turns.then(async () => {
    if (call.loop.holding) void call.outbox.send(gatewayTurnSignal, await call.loop.turn(speech));
    else void call.outbox.send(callerSpeechSignal, speech);
  });
  await until(call, () => call.lines.has(agentIndex) || call.over);
  return { receivedAt, firstSentenceAt: call.sentences.get(agentIndex) ?? null, over: call.over };
}

async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
  const answer = (status: number, json: object) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(json));
  };
  const control = /^\/media\/control\/calls\/([0-9a-f-]{36})$/.exec(request.url ?? '');
  if (control) {
    if (request.headers.authorization !== `Bearer ${settings.media.controlToken}`)
      return answer(401, { error: 'invalid token' });
    return answer(200, command(callOf(control[1]), body as MediaCommand));
  }
  const bench = /^\/bench\/calls\/([0-9a-f-]{36})\/(opened|heard|hung-up)$/.exec(request.url ?? '');
  if (!bench) return answer(404, { error: 'no such path' });
  const call = callOf(bench[1]);
  switch (bench[2]) {
    case 'opened':
      // The greeting went out and the workflow decided who takes the turns.
      await until(call, () => call.lines.has(0) && call.turnsDecided);
      return answer(200, { turnsHere: call.loop.holding });
    case 'heard':
      return answer(200, await heard(call, body.speech as CallerSpeech, body.agentIndex as number));
    case 'hung-up':
      await call.turns;
      await call.outbox.send(carrierCallbackSignal, { type: 'hung_up', atSeconds: body.atSeconds as number });
      call.over = true;
      wake(call);
      return answer(200, {});
  }
}

const server = createServer((request, response) => {
  serve(request, response).catch((error: unknown) => {
    response.writeHead(500);
    response.end(String(error));
  });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

// The media sessions of the calls held here: each lasts until its call is over.
const worker = await Worker.create({
  connection: await NativeConnection.connect({ address: settings.temporalAddress }),
  namespace: settings.temporalNamespace,
  taskQueue: mediaTaskQueue(settings.taskQueuePrefix, url),
  activities: {
    async holdMedia({ callId }: { callId: string }) {
      const call = callOf(callId);
      const context = Context.current();
      while (!call.over && !context.cancellationSignal.aborted) {
        context.heartbeat();
        await Promise.race([new Promise<void>((resolve) => call.waiters.push(resolve)), sleep(2000)]);
      }
    },
  },
  maxConcurrentActivityTaskExecutions: 2000,
});
process.on('SIGTERM', () => worker.shutdown());
console.log(JSON.stringify({ url }));
await worker.run();
server.close();
await orm.close(true);
