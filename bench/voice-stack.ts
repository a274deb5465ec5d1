import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client, Connection } from '@temporalio/client';
import { migrate, openOrm } from '../db/orm.js';
import { setLimits } from '../lib/accounts.js';
import { freePort, stopChild } from '../scripts/processes.js';
import { resolveTemporalCli } from '../scripts/temporal-binaries.js';
import { startPrivateTemporalDevServer } from '../scripts/temporal-dev-server.js';
import { createAgentFixture } from '../test/support/call-fixtures.js';
import { startChatStandIn } from '../test/support/chat-completions-stand-in.js';
import { startTestSpeech, type TestSpeech } from '../test/support/speech-kit.js';
import { startBenchPostgres } from './bench-database.js';

// The spoken-call benches' stack (bench/voice.ts, bench/turn-taking-gateway.ts): the media gateway
// (media/main.ts) and the workers (workers/main.ts) as processes of their own, the real local
// speech server, a Temporal dev server and a throw-away PostgreSQL of the bench's own, and a
// language-model stand-in (OpenAI-compatible chat completions, streamed) that answers every turn
// with `answer` after `llmDelayMs`. Callers reach it as Media Streams clients at `streamsUrl`.

/** What the gateway logged (LOG_LEVEL=info), one JSON object per line. */
// biome-ignore lint/suspicious/noExplicitAny: the gateway's log lines as JSON.
export type LogLine = Record<string, any>;

export interface VoiceStackOptions {
  /** The bench's name: its database, task queues and recordings are named after it. */
  name: string;
  greeting: string;
  /** The agent's answer to every turn, or to what the caller last said (as the stand-in got it). */
  answer: string | ((callerSaid: string) => string);
  llmDelayMs: number;
  endpointingMs: number;
  turnDetection: string;
  /** Phone numbers of the agent: one per call at once. */
  numbers: number;
  /** The Media Streams token the callers start their streams with. */
  token: string;
}

export interface VoiceStack {
  speech: TestSpeech;
  /** ws://…/media/streams */
  streamsUrl: string;
  /** The gateway's log lines so far (it logs at info). */
  gatewayLog: LogLine[];
  temporalClient: Client;
  agent: Awaited<ReturnType<typeof createAgentFixture>>;
  /** Stops everything, in the reverse order of its start. */
  stop(): Promise<void>;
}

export async function startVoiceStack(options: VoiceStackOptions): Promise<VoiceStack> {
  const cleanups: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.error(error));
  };
  try {
    const speech = await startTestSpeech();
    cleanups.push(() => speech.close());
    const standIn = await startChatStandIn(async (request) => {
      await new Promise((resolve) => setTimeout(resolve, options.llmDelayMs));
      const { answer } = options;
      return {
        kind: 'stream',
        text: typeof answer === 'string' ? answer : answer(lastCallerLine(request.body)),
      };
    });
    cleanups.push(() => standIn.close());

    const pg = await startBenchPostgres(`bench_${options.name}`);
    cleanups.push(() => pg.stop());
    const temporal = await startPrivateTemporalDevServer({
      cliPath: process.env.TEMPORAL_CLI_PATH || (await resolveTemporalCli()),
    });
    cleanups.push(() => temporal.stop());
    const orm = await openOrm(pg.url, { poolMax: 5 });
    cleanups.push(() => orm.close(true));
    await migrate(orm);
    const recordingsDir = mkdtempSync(path.join(os.tmpdir(), `bench-${options.name}-recordings-`));
    cleanups.push(async () => rmSync(recordingsDir, { recursive: true, force: true }));

    const [mediaPort, controlPort] = [await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: pg.url,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      TASK_QUEUE_PREFIX: `bench-${options.name}-${Date.now().toString(36)}-`,
      HOST: '127.0.0.1',
      MEDIA_PORT: String(mediaPort),
      MEDIA_STREAMS_TOKEN: options.token,
      MEDIA_CONTROL_LISTEN: `127.0.0.1:${controlPort}`,
      MEDIA_CONTROL_TOKEN: `${options.token}-control`,
      VOICE_SPEECH: '',
      VOICE_STT_URL: speech.url,
      VOICE_TTS_URL: speech.url,
      VOICE_LLM_URL: standIn.url,
      VOICE_LLM_API_KEY: 'sk-bench',
      VOICE_LLM_MODEL: 'stand-in-model',
      VOICE_ENDPOINTING_MS: String(options.endpointingMs),
      VOICE_TURN_DETECTION: options.turnDetection,
      RECORDINGS_DIR: recordingsDir,
      LOG_LEVEL: 'warn',
    };
    const workers = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
      env,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    cleanups.push(() => stopChild(workers, { signal: 'SIGTERM', graceMs: 30_000 }));
    // The gateway logs at info: its `caller turn` and `agent sentence` lines carry the turns' times.
    // Its speech is the local speech server, as with VOICE_SPEECH=local (its English words are scored).
    const gateway = spawn(process.execPath, ['--import', 'tsx', 'media/main.ts'], {
      env: { ...env, LOG_LEVEL: 'info', VOICE_SPEECH: 'local' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    cleanups.push(() => stopChild(gateway, { signal: 'SIGTERM', graceMs: 30_000 }));
    const gatewayLog = await readGatewayLog(gateway);
    const temporalClient = new Client({
      connection: await Connection.connect({ address: temporal.address }),
      namespace: temporal.namespace,
    });
    cleanups.push(() => temporalClient.connection.close());

    const agent = await createAgentFixture(orm, {
      plan: 'standard',
      name: 'Bench',
      firstMessage: options.greeting,
      numbers: options.numbers,
    });
    await setLimits(orm.em.fork(), {
      workspaceId: agent.workspaceId,
      callsPerMinute: 1_000_000,
      callsPerDay: 1_000_000,
    });
    return {
      speech,
      streamsUrl: `ws://127.0.0.1:${mediaPort}/media/streams`,
      gatewayLog,
      temporalClient,
      agent,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The gateway's log lines as they come (errors and warnings also on stderr); resolves once it runs. */
async function readGatewayLog(child: ChildProcess): Promise<LogLine[]> {
  const log: LogLine[] = [];
  const running = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the media gateway exited (${code}) before it ran`)));
    createInterface({ input: child.stdout! }).on('line', (text) => {
      let line: LogLine;
      try {
        line = JSON.parse(text);
      } catch {
        console.error(`[media] ${text}`);
        return;
      }
      log.push(line);
      if (line.level === 'warn' || line.level === 'error') console.error(`[media] ${text}`);
      if (line.msg === 'media gateway running') resolve();
    });
  });
  await running;
  return log;
}

/** `find()` once it finds something, looked for every 100 ms for up to `limitMs`. */
export async function waitFor<T>(find: () => T | undefined, limitMs = 30_000): Promise<T> {
  const until = Date.now() + limitMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error('the gateway did not log what the bench waits for');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The text of the chat request's last user message ('' when none). */
// biome-ignore lint/suspicious/noExplicitAny: the chat completions request body as JSON.
function lastCallerLine(body: any): string {
  const messages: { role: string; content: unknown }[] = body?.messages ?? [];
  const content = messages.findLast((message) => message.role === 'user')?.content;
  return typeof content === 'string' ? content : JSON.stringify(content ?? '');
}
