import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import wavefile from 'wavefile';
import { Call } from '../db/entities/index.js';
import { MediaStreamsClient } from '../lib/media/media-streams-client.js';
import { streamTokenFor } from '../lib/media/stream-token.js';
import { recordingPath } from '../lib/recordings/recording-files.js';
import { loadSettings } from '../lib/settings.js';
import { callProgressQuery } from '../lib/temporal/call-messages.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { GatewayDrain } from '../media/gateway-drain.js';
import { freePort } from '../scripts/processes.js';
import { createFixture, type Fixture } from './support/api.js';
import { type AgentFixture, createAgentFixture } from './support/call-fixtures.js';
import { type CallStack, startCallStack, waitForCallEnd } from './support/call-stack.js';
import { signalsReceived } from './support/history-text.js';
import { startTestMediaGateway, type TestMediaGateway, testMediaSettings } from './support/media-gateway.js';
import { startTestSpeech, type TestSpeech } from './support/speech-kit.js';
import { callTo, orAfter, until, waitForHealth } from './support/wait-for.js';

// The media gateway end to end, through real parts only: the gateway's code on a real port, the
// local speech server with its real models (Whisper tiny.en, Piper), Silero voice activity
// detection, PostgreSQL, a Temporal dev server and the call workflow with the scripted agent. The
// caller is a Media Streams client sending Piper-made speech as 8 kHz μ-law in real time and
// playing back what it gets, as Twilio would. Assertions are on keywords: the models are small.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TOKEN = 'media-test-token-4f1c2a';
let stack: CallStack;
let gateway: TestMediaGateway;
let speech: TestSpeech;
let recordingsDir: string;
let owner: Fixture;
let agent: AgentFixture;

const OPENING =
  'Thanks for calling Acme. My name is Ada, and I can help you with your booking. What can I do for you today?';

before(async () => {
  recordingsDir = await mkdtemp(path.join(tmpdir(), 'media-gateway-'));
  const defaults = loadSettings({});
  [stack, speech] = await Promise.all([
    startCallStack({
      prefix: 'media-gateway',
      simTimeScale: 1,
      // A short idle window, for the stream that goes quiet below; the test client sends a frame every 20 ms.
      settings: {
        media: { ...testMediaSettings(defaults.media, { streamsToken: TOKEN }), idleTimeoutMs: 4_000 },
        recordingsDir,
      },
    }),
    startTestSpeech(),
  ]);
  gateway = await startTestMediaGateway(stack, speech);
  owner = await createFixture(stack.db.orm, { requestsPerSecond: 10_000 });
  agent = await createAgentFixture(stack.db.orm, { workspaceId: owner.workspaceId, firstMessage: OPENING });
});

after(async () => {
  await gateway?.close();
  await stack?.close();
  await speech?.close();
  if (recordingsDir) await rm(recordingsDir, { recursive: true, force: true });
});

const callerSays = (text: string) => speech.callerSays(text);
const transcribe = (audio: Int16Array) => speech.transcribe(audio);

async function callsTo(number: string): Promise<Call[]> {
  return stack.db.orm.em.fork().find(Call, { toNumber: number });
}

async function connect(start: Parameters<MediaStreamsClient['start']>[0]): Promise<MediaStreamsClient> {
  const client = await MediaStreamsClient.connect(gateway.streamsUrl);
  client.start(start);
  return client;
}

async function transcriptOf(callId: string): Promise<{ role: string; text: string }[]> {
  return (await stack.api.client(owner.secret).get(`/calls/${callId}/transcript`)).body.data;
}

/** The call the stream brought in, once the gateway has taken it. */
const callOf = (number: string) => callTo(stack.db.orm, number);

/**
 * media/main.ts as its own process, as npm start runs it, on the test's database and Temporal: its
 * public and control ports, and its log lines (LOG_LEVEL info) as they come.
 */
async function gatewayProcess() {
  const [port, controlPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, ['--import', 'tsx', 'media/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: stack.db.url,
      TEMPORAL_ADDRESS: stack.settings.temporalAddress,
      TEMPORAL_NAMESPACE: stack.settings.temporalNamespace,
      TASK_QUEUE_PREFIX: stack.settings.taskQueuePrefix,
      MEDIA_PORT: String(port),
      MEDIA_STREAMS_TOKEN: TOKEN,
      MEDIA_CONTROL_LISTEN: `127.0.0.1:${controlPort}`,
      MEDIA_CONTROL_TOKEN: stack.settings.media.controlToken!,
      RECORDINGS_DIR: recordingsDir,
      VOICE_STT_URL: speech.url,
      VOICE_TTS_URL: speech.url,
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const log: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => log.push(line));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, port, controlPort, log, exited };
}

describe('the media gateway', () => {
  describe('a spoken conversation', { timeout: 180_000 }, () => {
    test('the caller is heard, the agent answers aloud sentence by sentence, hangs up, and the call is recorded', async () => {
      const [askEmail, sayGoodbye] = await Promise.all([
        callerSays('Could you send me the confirmation by email, please?'),
        callerSays('Thank you, goodbye.'),
      ]);
      const client = await connect({ to: agent.number, from: '+4791234567', token: TOKEN });
      const call = await callOf(agent.number);
      assert.equal(call.direction, 'inbound');
      assert.equal(call.channel, 'phone');
      assert.equal(call.fromNumber, '+4791234567');

      // The opening line, heard in full.
      // Sentences follow each other as they are synthesised: a loaded machine may leave a gap.
      await client.agentFinished({ limitMs: 30_000, quietMs: 2000 });
      const opening = await transcribe(client.agentAudio());
      assert.match(opening, /calling/, opening);
      assert.match(opening, /booking/, opening);
      // Begun by the gateway at the answer and asked for again by the workflow: played once, each
      // of its three sentences marked once.
      const openingMarks = client.marks
        .map((mark) => mark.name)
        .filter((name) => name.startsWith('agent-0-'));
      assert.deepEqual(openingMarks, ['agent-0-0', 'agent-0-1', 'agent-0-2']);

      const askedAt = performance.now();
      await client.say(askEmail);
      const answerStarts = await client.agentStarts(askedAt + 100);
      await client.agentFinished({ after: answerStarts });
      const answer = await transcribe(client.agentAudio(answerStarts));
      assert.match(answer, /email/, answer);

      const byeAt = performance.now();
      await client.say(sayGoodbye);
      // The agent says goodbye and hangs up: its last audio plays, then the socket closes normally.
      const closed = await orAfter(client.closed, 60_000, null);
      // Should it fail, the transcript tells what the agent heard and said.
      if (!closed) assert.fail(`the agent did not hang up: ${JSON.stringify(await transcriptOf(call.id))}`);
      assert.equal(closed.code, 1000);
      const goodbye = await transcribe(client.agentAudio(byeAt));
      // "Thank you for your time. Goodbye!": Whisper tiny.en sometimes drops the short last word.
      if (!/goodbye|bye|for your time/.test(goodbye))
        assert.fail(`${goodbye} ${JSON.stringify(await transcriptOf(call.id))}`);
      const lastMark = client.marks.at(-1);
      assert.ok(lastMark?.echoedAt, 'the last mark was echoed before the socket closed');

      const ended = await waitForCallEnd(stack.api.client(owner.secret), call.id);
      assert.equal(ended.status, 'completed');
      assert.equal(ended.end_reason, 'agent_hangup');
      assert.equal(ended.has_recording, true);
      const lines = await transcriptOf(call.id);
      assert.deepEqual(
        lines.map((l) => l.role),
        ['agent', 'caller', 'agent', 'caller', 'agent'],
        JSON.stringify(lines),
      );
      assert.match(lines[1].text.toLowerCase(), /email/);
      assert.match(lines[3].text.toLowerCase(), /bye/);

      // The turns were the gateway's: handed over after the opening, each reported once.
      const handle = stack.client.workflow.getHandle(callWorkflowId(call.id));
      const signals = signalsReceived(await handle.fetchHistory());
      assert.deepEqual(
        signals.filter((name) => name !== 'carrierCallback'),
        ['gatewayTurn', 'gatewayTurn'],
      );

      // Per turn: end of speech → transcript line → first token → first agent audio.
      const turns = await handle.query(callProgressQuery);
      const measured = turns.agentTurns.filter((t) => t.fromSpeechEnd);
      assert.ok(measured.length >= 1);
      for (const t of measured) {
        assert.ok(t.fromSpeechEnd!.transcriptMs >= 0);
        assert.ok(
          t.fromSpeechEnd!.firstAudioMs === null ||
            t.fromSpeechEnd!.firstAudioMs >= t.fromSpeechEnd!.transcriptMs,
        );
      }

      // Two channels, 8 kHz 16-bit, about as long as the call.
      const wav = new wavefile.WaveFile(await readFile(recordingPath(recordingsDir, call.id)));
      const fmt = wav.fmt as { numChannels: number; sampleRate: number; bitsPerSample: number };
      assert.deepEqual([fmt.numChannels, fmt.sampleRate, fmt.bitsPerSample], [2, 8000, 16]);
      const seconds = (wav.getSamples(false, Int16Array) as unknown as Int16Array[])[0].length / 8000;
      assert.ok(seconds > 8 && seconds < 60, `recording of ${seconds} s`);
    });
  });

  describe('refused streams', { timeout: 60_000 }, () => {
    test('a wrong or missing token closes the socket 1008 and records nothing', async () => {
      const wrong = await connect({ to: agent.number, token: 'not-the-token' });
      assert.equal((await wrong.closed).code, 1008);
      const missing = await connect({ to: agent.number });
      assert.equal((await missing.closed).code, 1008);
      const viaQuery = await MediaStreamsClient.connect(`${gateway.streamsUrl}?token=nope`);
      assert.equal((await viaQuery.closed).code, 1008);
    });

    test('a number without a published agent closes the socket 1000 and records no call', async () => {
      const draft = await createAgentFixture(stack.db.orm, {
        workspaceId: owner.workspaceId,
        status: 'draft',
      });
      const client = await connect({ to: draft.number, from: '+4791234567', token: TOKEN });
      const closed = await client.closed;
      assert.deepEqual(closed, { code: 1000, reason: 'agent_not_published' });
      assert.equal((await callsTo(draft.number)).length, 0);
    });

    test('a stream that is not 8 kHz μ-law is refused (1003) before a call is taken', async () => {
      const other = await createAgentFixture(stack.db.orm, { workspaceId: owner.workspaceId });
      const client = await connect({
        to: other.number,
        token: TOKEN,
        mediaFormat: { encoding: 'audio/l16', sampleRate: 16000, channels: 1 },
      });
      assert.equal((await client.closed).code, 1003);
      assert.equal((await callsTo(other.number)).length, 0);
    });
  });

  describe('draining (telephony spec section 5)', { timeout: 120_000 }, () => {
    test('a draining gateway refuses new streams (1013) and is not ready, while its live call goes on to its end', async () => {
      const live = await createAgentFixture(stack.db.orm, {
        workspaceId: owner.workspaceId,
        firstMessage: OPENING,
      });
      const client = await connect({ to: live.number, from: '+4791234571', token: TOKEN });
      const call = await callOf(live.number);
      await client.agentStarts(0);
      const drain = gateway.context.drain;
      drain.begin();
      try {
        const refused = await connect({ to: agent.number, from: '+4791234572', token: TOKEN });
        assert.deepEqual(await refused.closed, {
          code: 1013,
          reason: 'draining: try again later (another gateway)',
        });
        const ready = await fetch(`${gateway.publicUrl}/readyz`);
        assert.equal(ready.status, 503);
        assert.equal(
          ((await ready.json()) as { checks: Record<string, string> }).checks.draining,
          'unavailable',
        );
        // The live call is still held: the drain waits for it.
        assert.equal(await drain.untilIdle(gateway.context.sessions, 300), 'timed_out');
        // Its audio still flows: the agent's opening goes on playing.
        const played = client.agentAudio().length;
        await until(() => client.agentAudio().length > played, 'the agent still plays on the live call');
        client.stop();
        assert.equal(await drain.untilIdle(gateway.context.sessions, 20_000), 'idle');
        const ended = await waitForCallEnd(stack.api.client(owner.secret), call.id);
        assert.equal(ended.end_reason, 'caller_hangup');
      } finally {
        // The gateway takes streams again for the tests after this one.
        gateway.context.drain = new GatewayDrain();
      }
      assert.equal((await fetch(`${gateway.publicUrl}/readyz`)).status, 200);
    });

    test('SIGTERM to the gateway process drains it: the live call goes on to its own end (not agent_error), then the process exits 0', async () => {
      const live = await createAgentFixture(stack.db.orm, {
        workspaceId: owner.workspaceId,
        firstMessage: OPENING,
      });
      const gatewayRun = await gatewayProcess();
      try {
        await waitForHealth(`http://127.0.0.1:${gatewayRun.port}/health`);
        await until(
          () => gatewayRun.log.some((line) => line.includes('media gateway running')),
          'not running',
        );
        const streams = `ws://127.0.0.1:${gatewayRun.port}/media/streams`;
        const client = await MediaStreamsClient.connect(streams);
        client.start({ to: live.number, from: '+4791234573', token: TOKEN });
        const call = await callOf(live.number);
        await client.agentStarts(0);
        gatewayRun.child.kill('SIGTERM');
        await until(() => gatewayRun.log.some((line) => line.includes('media gateway draining')), 'no drain');
        const refused = await MediaStreamsClient.connect(streams);
        refused.start({ to: agent.number, from: '+4791234574', token: TOKEN });
        assert.equal((await refused.closed).code, 1013);
        // The call is not ended by the SIGTERM: its audio goes on, its media session holds.
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        const played = client.agentAudio().length;
        await until(() => client.agentAudio().length > played, 'the agent still plays on the live call');
        assert.equal(
          (await stack.api.client(owner.secret).get(`/calls/${call.id}`)).body.status,
          'in_progress',
        );
        client.stop();
        assert.equal(await orAfter(gatewayRun.exited, 60_000, 'still running'), 0, gatewayRun.log.join('\n'));
        const ended = await waitForCallEnd(stack.api.client(owner.secret), call.id);
        assert.equal(ended.end_reason, 'caller_hangup');
      } finally {
        gatewayRun.child.kill('SIGKILL');
      }
    });
  });

  describe('barge-in and hang-ups', { timeout: 180_000 }, () => {
    test('one stream per call: a second one is closed 1008; a stream that goes quiet without a hang-up is the caller gone (caller_hangup at once, not after the silence timeout)', async () => {
      // A number of its own: callOf finds the first call to a number.
      const quiet = await createAgentFixture(stack.db.orm, {
        workspaceId: owner.workspaceId,
        firstMessage: OPENING,
      });
      const client = await connect({ to: quiet.number, from: '+4791234569', token: TOKEN });
      const call = await callOf(quiet.number);
      await client.agentStarts(0);
      // The call holds its stream: another one for the same call, even with the call's own token,
      // is refused; with the shared token it never gets that far.
      const second = await MediaStreamsClient.connect(gateway.streamsUrl);
      second.start({
        callId: call.id,
        token: streamTokenFor(stack.settings.media.controlToken!, call.id, 30),
      });
      const refused = await second.closed;
      assert.equal(refused.code, 1008);
      assert.equal(refused.reason, 'the call already has a stream');
      const shared = await MediaStreamsClient.connect(gateway.streamsUrl);
      shared.start({ callId: call.id, token: TOKEN });
      assert.deepEqual(await shared.closed, { code: 1008, reason: 'invalid token' });
      client.goQuiet();
      const quietAt = Date.now();
      // The silence timeout would take 10 minutes; MEDIA_IDLE_TIMEOUT_MS is 4 s here.
      const ended = await waitForCallEnd(stack.api.client(owner.secret), call.id, 60_000);
      assert.equal(ended.end_reason, 'caller_hangup');
      assert.ok(Date.now() - quietAt >= 4_000, 'not before the idle window');
      client.close();
    });

    test('speech over the agent stops it (clear), and its line keeps only what had started playing', async () => {
      // A first sentence of several seconds, so the caller speaks over it whatever the machine's load.
      const LONG_OPENING = `Thanks for calling Acme restaurant bookings, my name is Ada and I will be looking after your booking today. ${OPENING}`;
      const other = await createAgentFixture(stack.db.orm, {
        workspaceId: owner.workspaceId,
        firstMessage: LONG_OPENING,
      });
      const interruption = await callerSays('Sorry to interrupt, could you send me the details by email?');
      const client = await connect({ to: other.number, from: '+4791234568', token: TOKEN });
      const call = await callOf(other.number);
      // The caller starts talking a second into the opening line, which lasts several seconds.
      const agentStarted = await client.agentStarts(0);
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, agentStarted + 1000 - performance.now())),
      );
      const framesBefore = client.saidFrames;
      await client.say(interruption);
      // Asserted in the caller's audio, not in time (the real voice activity model on a loaded core
      // may lag, and a late sender catches up in a burst): the clear comes, and not before 300 ms
      // (15 frames) of the caller's speech had reached the gateway. The rule and the cut are also
      // tested on fakes at the media path's ports (test/media-path.test.ts).
      await until(() => client.clears.length >= 1, 'the gateway sent no clear', { limitMs: 30_000 });
      const framesHeard = client.clearedAfterSaidFrames[0] - framesBefore;
      assert.ok(framesHeard >= 15, `clear after ${framesHeard} frames of the caller's speech`);
      // The agent answers the interruption.
      const answerStarts = await client.agentStarts(performance.now());
      await client.agentFinished({ after: answerStarts });
      client.stop();
      const ended = await waitForCallEnd(stack.api.client(owner.secret), call.id);
      assert.equal(ended.end_reason, 'caller_hangup');
      const lines = await transcriptOf(call.id);
      assert.equal(lines[0].role, 'agent');
      // Cut to its first sentence, the one that was playing.
      assert.equal(lines[0].text, LONG_OPENING.slice(0, LONG_OPENING.indexOf('today.') + 'today.'.length));
      assert.equal(lines[1].role, 'caller');
      assert.match(lines[1].text.toLowerCase(), /email/);
    });

    test('stop is the caller hanging up; malformed and unknown messages on the way change nothing', async () => {
      const other = await createAgentFixture(stack.db.orm, {
        workspaceId: owner.workspaceId,
        firstMessage: 'Hello, Acme bookings.',
      });
      const client = await connect({ to: other.number, from: '+4791234569', token: TOKEN });
      const call = await callOf(other.number);
      client.sendRaw('not json');
      client.sendRaw(JSON.stringify({ event: 'dtmf', dtmf: { digit: '1' } }));
      client.sendRaw(JSON.stringify({ event: 'media', media: { payload: 42 } }));
      client.sendRaw(JSON.stringify({ event: 'media', media: { payload: 'x'.repeat(10_000) } }));
      await client.agentFinished();
      client.stop();
      const closed = await client.closed.catch(() => null);
      const ended = await waitForCallEnd(stack.api.client(owner.secret), call.id);
      assert.equal(ended.status, 'completed');
      assert.equal(ended.end_reason, 'caller_hangup');
      assert.ok(closed === null || closed.code === 1000 || closed.code === 1005);
      // Frames after stop are not heard: the call's record stays as it was.
      assert.equal(ended.has_recording, true);
    });
  });

  describe('transfer', { timeout: 120_000 }, () => {
    // This stack's workers have no gateway address to dial a leg with audio to, so the gateway
    // cannot bridge, and its client does not report: whether a target answered could never be known.
    test('a caller who asks for a person, where no transfer outcome could be known: none is made, the agent says so, the call goes on', async () => {
      const other = await createAgentFixture(stack.db.orm, {
        workspaceId: owner.workspaceId,
        firstMessage: 'Hello, Acme bookings.',
      });
      const client = await connect({ to: other.number, from: '+4791234572', token: TOKEN });
      const call = await callOf(other.number);
      await client.agentFinished();
      const askedAt = performance.now();
      await client.say(await callerSays('Can I talk to a real person, please?'));
      const transfer = async () =>
        (await stack.db.orm.em.fork().findOneOrFail(Call, { id: call.id })).transfer;
      await until(
        async () => (await transfer())?.status === 'failed',
        'the transfer was not recorded failed',
        { limitMs: 60_000 },
      );
      assert.deepEqual(
        { ...(await transfer()), started_at: undefined },
        {
          to: stack.settings.transferNumber,
          mode: 'cold',
          status: 'failed',
          failure: 'refused',
          started_at: undefined,
          connected_at: null,
        },
      );
      await client.agentFinished({ after: performance.now(), quietMs: 1000, limitMs: 60_000 });
      const said = await transcribe(client.agentAudio(askedAt));
      // The failed transfer's line (lib/voice-runtime/transfer-failed.ts), as Whisper hears it: its
      // "I couldn't put you through." said on its own after "I'm sorry," is now and then "…put you to."
      assert.match(said, /couldn.?t put you/i, said);
      // Nothing was handed to the client: no target, and the stream is still open.
      assert.equal(client.events.filter((event) => event.event === 'transfer').length, 0);
      client.stop();
      const ended = await waitForCallEnd(stack.api.client(owner.secret), call.id);
      assert.equal(ended.end_reason, 'caller_hangup');
    });
  });

  describe('a gateway that dies mid-call', { timeout: 180_000 }, () => {
    test('the call workflow notices and completes the call; the recording so far is a readable WAV', async () => {
      const other = await createAgentFixture(stack.db.orm, {
        workspaceId: owner.workspaceId,
        firstMessage: OPENING,
      });
      const { child, port, controlPort } = await gatewayProcess();
      const controlToken = stack.settings.media.controlToken!;
      try {
        await waitForHealth(`http://127.0.0.1:${port}/health`);
        // The process's own health (docs/operations.md, "Health"): alive, then ready once its
        // media-session worker polls.
        assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
        let ready: { status: number; body: unknown } = { status: 0, body: null };
        for (let i = 0; i < 50 && ready.status !== 200; i++) {
          const response = await fetch(`http://127.0.0.1:${port}/readyz`);
          ready = { status: response.status, body: await response.json() };
          if (ready.status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
        }
        assert.deepEqual(ready, {
          status: 200,
          body: {
            status: 'ready',
            checks: { database: 'ok', temporal: 'ok', workers: 'ok', draining: 'ok', speech: 'ok' },
          },
        });
        const client = await MediaStreamsClient.connect(
          `ws://127.0.0.1:${port}/media/streams?token=${TOKEN}`,
        );
        client.start({ to: other.number, from: '+4791234570' });
        const call = await callOf(other.number);
        await client.agentStarts(0);
        // One secret, one door (telephony spec section 3): the public port has no control API, and
        // the control port opens only with MEDIA_CONTROL_TOKEN; a forged release or callback changes nothing.
        const release = JSON.stringify({ type: 'release', reason: 'hang_up' });
        const post = (url: string, token: string, body = release) =>
          fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body });
        const controlPath = `/media/control/calls/${call.id}`;
        const callbackPath = `/media/carrier/calls/${call.id}/callback`;
        assert.equal((await post(`http://127.0.0.1:${port}${controlPath}`, controlToken)).status, 404);
        assert.equal((await post(`http://127.0.0.1:${port}${callbackPath}`, controlToken)).status, 404);
        for (const token of [TOKEN, 'nope', '']) {
          assert.equal((await post(`http://127.0.0.1:${controlPort}${controlPath}`, token)).status, 401);
          const forged = await post(
            `http://127.0.0.1:${controlPort}${callbackPath}`,
            token,
            '{"type":"busy"}',
          );
          assert.equal(forged.status, 401);
        }
        // The control port answers its own token (a command the call does not know is refused, not run).
        const known = await post(
          `http://127.0.0.1:${controlPort}${controlPath}`,
          controlToken,
          '{"type":"x"}',
        );
        assert.equal(known.status, 400);
        // A bridged transfer's length (the SIP side's transfer_ended) is stored on the call, once
        // checked; set, not added, so a retried callback counts once.
        const callback = `http://127.0.0.1:${controlPort}${callbackPath}`;
        for (const bad of [
          '{"type":"transfer_ended"}',
          '{"type":"transfer_ended","seconds":-1}',
          '{"type":"transfer_ended","seconds":"9"}',
          '{"type":"transfer_ended","seconds":86401}',
          // A transfer's outcome names why it failed, one of the Call's `transfer.failure`s.
          '{"type":"transfer_failed"}',
          '{"type":"transfer_failed","failure":"not_allowed"}',
        ]) {
          assert.equal((await post(callback, controlToken, bad)).status, 400, bad);
        }
        const transferEnded = '{"type":"transfer_ended","seconds":12.4}';
        assert.equal((await post(callback, TOKEN, transferEnded)).status, 401);
        for (let i = 0; i < 2; i++)
          assert.equal((await post(callback, controlToken, transferEnded)).status, 200);
        const stored = await stack.db.orm.em.fork().findOneOrFail(Call, { id: call.id });
        assert.equal(stored.transferSeconds, 12);
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const live = await stack.api.client(owner.secret).get(`/calls/${call.id}`);
        assert.equal(live.body.status, 'in_progress', 'nothing the forged requests asked happened');
        // Killed mid-conversation, once the agent has joined (its opening made whole): a kill during
        // that step is a step's retries (75 s), not the media session's heartbeat timeout tested here.
        const progress = () =>
          stack.client.workflow.getHandle(callWorkflowId(call.id)).query(callProgressQuery);
        await until(async () => (await progress()).step === 'in_conversation', 'the agent did not join', {
          limitMs: 30_000,
          everyMs: 100,
        });
        child.kill('SIGKILL');
        const closed = await client.closed;
        assert.notEqual(closed.code, 1000);
        // Within the media session's heartbeat timeout (10 s) and the agent's wind-down.
        const ended = await waitForCallEnd(stack.api.client(owner.secret), call.id, 90_000);
        assert.equal(ended.status, 'completed');
        assert.equal(ended.end_reason, 'agent_error');
        const wav = new wavefile.WaveFile(await readFile(recordingPath(recordingsDir, call.id)));
        const fmt = wav.fmt as { numChannels: number; sampleRate: number };
        assert.deepEqual([fmt.numChannels, fmt.sampleRate], [2, 8000]);
      } finally {
        child.kill('SIGKILL');
      }
    });
  });
});
