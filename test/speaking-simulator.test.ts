import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import wavefile from 'wavefile';
import { Call } from '../db/entities/index.js';
import { BeepDetector } from '../lib/audio/tone-detector.js';
import { answerIncomingPhoneCall } from '../lib/calls/incoming-calls.js';
import { MediaStreamsClient } from '../lib/media/media-streams-client.js';
import { streamTokenFor } from '../lib/media/stream-token.js';
import { recordingPath } from '../lib/recordings/recording-files.js';
import { loadSettings } from '../lib/settings.js';
import type { SpeechToText } from '../lib/speech/speech-ports.js';
import { callWorkflowId, farEndWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { DIGIT_WORDS } from '../lib/voice-runtime/scripted-agent.js';
import { freePort } from '../scripts/processes.js';
import { createFixture, type Fixture } from './support/api.js';
import { type AgentFixture, createAgentFixture, createQueuedCall } from './support/call-fixtures.js';
import { type CallStack, startCallStack, waitForCallEnd } from './support/call-stack.js';
import { keepHistory } from './support/kept-histories.js';
import { startTestMediaGateway, type TestMediaGateway, testMediaSettings } from './support/media-gateway.js';
import { startTestSpeech, type TestSpeech } from './support/speech-kit.js';
import { type TimelinePart, timeline } from './support/test-audio.js';
import { until } from './support/wait-for.js';

// The speaking simulator end to end (docs/voice.md, "The simulator speaks"): with MEDIA_GATEWAY_URL
// the calls worker pins a placed call to the gateway, the simulator's far end answers with a Media
// Streams connection there and says its scripted lines as Piper-made audio; the gateway hears them
// (Silero, Whisper tiny.en), the agent answers aloud, and the call is recorded. Real parts only:
// the gateway's code on a real port, the local speech server, PostgreSQL, Temporal, the workers.

const TOKEN = 'speaking-simulator-token-7d2e';
let stack: CallStack;
let gateway: TestMediaGateway;
let speech: TestSpeech;
let recordingsDir: string;
/** How often the end-of-turn model answered, over the file's calls. */
let turnModelAnswers = 0;
/** The pauses transcribed with Whisper's score (verbose_json): the local speech's English ones. */
let scoredPauses = 0;
/** The workspace placing the calls, and its agent (the scripted runtime). */
let owner: Fixture, agent: AgentFixture;

before(async () => {
  recordingsDir = await mkdtemp(path.join(tmpdir(), 'speaking-simulator-'));
  speech = await startTestSpeech();
  const [port, controlPort] = [await freePort(), await freePort()];
  const defaults = loadSettings({});
  const endpoint = (model: string) => ({ url: speech.url, apiKey: undefined, model, timeoutMs: 15_000 });
  stack = await startCallStack({
    prefix: 'speaking-simulator',
    // The far end's pauses at a quarter: its lines themselves are spoken in real time.
    simTimeScale: 0.25,
    settings: {
      media: {
        ...testMediaSettings(defaults.media, { streamsToken: TOKEN, port, controlPort }),
        // The local speech's own default (VOICE_SPEECH=local): a turn ends when the end-of-turn
        // model (Smart Turn on the speech server) and the pause's words say so, not by silence.
        turnDetection: { ...defaults.media.turnDetection, mode: 'model' },
      },
      speech: { local: true, stt: endpoint('whisper-1'), tts: endpoint('tts-1') },
      recordingsDir,
    },
  });
  const stt: SpeechToText = {
    transcribe: (audio, options) => speech.stt.transcribe(audio, options),
    transcribeScored: (audio, options) => {
      scoredPauses++;
      return speech.stt.transcribeScored!(audio, options);
    },
  };
  gateway = await startTestMediaGateway(stack, { stt, tts: speech.tts }, undefined, { port, controlPort });
  // The real model, counted: the tests below show it was asked and answered.
  const model = gateway.context.endOfTurn!;
  gateway.context.endOfTurn = {
    complete: async (audio, options) => {
      const complete = await model.complete(audio, options);
      turnModelAnswers++;
      return complete;
    },
  };
  owner = await createFixture(stack.db.orm, { requestsPerSecond: 10_000 });
  agent = await createAgentFixture(stack.db.orm, { workspaceId: owner.workspaceId });
});

after(async () => {
  await gateway?.close();
  await stack?.close();
  await speech?.close();
  if (recordingsDir) await rm(recordingsDir, { recursive: true, force: true });
});

const api = () => stack.api.client(owner.secret);

/** A caller on a plain Media Streams stream to `number`, and the call it brought in. */
async function callingIn(
  number: string,
  from: string,
): Promise<{ client: MediaStreamsClient; callId: string }> {
  const client = await MediaStreamsClient.connect(gateway.streamsUrl);
  client.start({ to: number, from, token: TOKEN });
  let call: Call | null = null;
  await until(async () => {
    call = await stack.db.orm.em.fork().findOne(Call, { toNumber: number });
    return call !== null;
  }, 'the stream brought in no call');
  return { client, callId: call!.id };
}

/** Spoken calls run in real time and on a loaded machine slowly: minutes, not seconds. */
const SPOKEN_CALL = { timeout: 240_000 };

/** The call once it has ended; if it does not within `limitMs`, the failure shows how far it got. */
async function spokenCallEnd(callId: string, limitMs = 200_000) {
  try {
    return await waitForCallEnd(api(), callId, limitMs);
  } catch (error) {
    const [call, transcript] = await Promise.all([
      api().get(`/calls/${callId}`),
      api().get(`/calls/${callId}/transcript`),
    ]);
    const session = gateway.context.sessions.get(callId);
    throw new Error(
      `call ${callId} did not end within ${limitMs} ms: ${JSON.stringify(call.body)}; ` +
        `transcript ${JSON.stringify(transcript.body.data)}; gateway session ${session ? 'open' : 'none'}`,
      { cause: error },
    );
  }
}

/** The audio path's histories (`<name>-call`, `<name>-far-end`), for the replay test (test/workflow-histories.test.ts). */
async function keepHistories(callId: string, name: string): Promise<void> {
  for (const [kind, workflowId] of [
    ['call', callWorkflowId(callId)],
    ['far-end', farEndWorkflowId(callId)],
  ] as const) {
    const handle = stack.client.workflow.getHandle(workflowId);
    await handle.result();
    keepHistory(`${name}-${kind}`, await handle.fetchHistory());
  }
}

describe('the simulator speaks', { timeout: 600_000 }, () => {
  test(
    'a placed call to a friendly person is a spoken conversation: heard, answered aloud, recorded',
    SPOKEN_CALL,
    async () => {
      const placed = await api().post('/calls', { agent_id: agent.agentId, to: '+4790005555' });
      assert.equal(placed.status, 202, placed.text);
      const ended = await spokenCallEnd(placed.body.id);
      assert.equal(ended.status, 'completed', JSON.stringify(ended));
      assert.equal(ended.has_recording, true);
      const row = await stack.db.orm.em.fork().findOneOrFail(Call, { id: placed.body.id });
      assert.equal(row.mediaGateway, gateway.controlUrl, 'the call was pinned to the gateway');

      const transcript = await api().get(`/calls/${placed.body.id}/transcript`);
      const lines = transcript.body.data as { role: string; text: string }[];
      const said = (role: string) =>
        lines
          .filter((l) => l.role === role)
          .map((l) => l.text.toLowerCase())
          .join(' | ');
      assert.match(lines[0].text, /this is Ada.*I'm calling/, JSON.stringify(lines));
      // The person's lines, recognised from their audio (Whisper's words, not the script's text).
      const person = said('caller');
      assert.match(person, /minute/, person);
      assert.match(person, /email/, person);
      // The last line's words before its short "Bye!", which Whisper tiny.en sometimes hears as another word.
      assert.match(person, /that is all/, person);
      assert.ok(said('agent').length > 0);

      // Both channels carry sound: the person's (1) and the agent's (2).
      const wav = new wavefile.WaveFile(await readFile(recordingPath(recordingsDir, placed.body.id)));
      const [caller, agentChannel] = wav.getSamples(false, Int16Array) as unknown as Int16Array[];
      const loud = (samples: Int16Array) => samples.filter((s) => Math.abs(s) > 2000).length / 8000;
      assert.ok(loud(caller) > 1, `caller channel: ${loud(caller)} s of sound`);
      assert.ok(loud(agentChannel) > 1, `agent channel: ${loud(agentChannel)} s of sound`);

      await keepHistories(placed.body.id, 'outbound-speaking');
    },
  );

  test(
    'an answering machine (3001) greets aloud and beeps a real 1 kHz tone: heard as a machine, the message after the beep, voicemail',
    SPOKEN_CALL,
    async () => {
      const caller = await createAgentFixture(stack.db.orm, { workspaceId: owner.workspaceId });
      const message = 'Hi Kari, this is Ada from Acme. Please call us back about your booking.';
      const patched = await api().patch(`/agents/${caller.agentId}`, {
        voicemail: { detect: true, action: 'leave_message', message },
      });
      assert.equal(patched.status, 200, patched.text);
      const placed = await api().post('/calls', { agent_id: caller.agentId, to: '+4790003001' });
      assert.equal(placed.status, 202, placed.text);
      const ended = await spokenCallEnd(placed.body.id);
      const lines = (await api().get(`/calls/${placed.body.id}/transcript`)).body.data as {
        role: string;
        text: string;
      }[];
      assert.equal(ended.end_reason, 'voicemail', JSON.stringify(lines));
      assert.equal(ended.answered_by, 'machine');
      // The greeting, recognised from its audio, before the message, the last line.
      assert.match(
        lines
          .filter((line) => line.role === 'caller')
          .map((line) => line.text)
          .join(' '),
        /reached|message|tone/i,
        JSON.stringify(lines),
      );
      assert.equal(lines.at(-1)?.role, 'agent', JSON.stringify(lines));
      assert.equal(lines.at(-1)?.text, message);
      // The beep is on the call's recording (whole once the gateway let the call go), and the
      // message was said after it.
      await until(() => !gateway.context.sessions.get(placed.body.id), 'the gateway still holds the call');
      const wav = new wavefile.WaveFile(await readFile(recordingPath(recordingsDir, placed.body.id)));
      const [callerChannel, agentChannel] = wav.getSamples(false, Int16Array) as unknown as Int16Array[];
      const beep = new BeepDetector().push(Int16Array.from(callerChannel));
      assert.equal(beep?.frequency, 1000, 'a 1 kHz beep on the caller channel');
      const firstAgentSound = agentChannel.findIndex((sample) => Math.abs(sample) > 2000) / 8;
      assert.ok(
        firstAgentSound >= beep!.endedAtMs,
        `the agent spoke at ${firstAgentSound} ms, the beep ended at ${beep!.endedAtMs} ms`,
      );
      const farEnd = await stack.client.workflow.getHandle(farEndWorkflowId(placed.body.id)).result();
      assert.deepEqual((farEnd as { recorded: string[] }).recorded, [message]);
    },
  );

  test('a stream attaches only to a live call pinned to this gateway and with that call’s own token (else 1008)', async () => {
    // A call pinned to the gateway that is over (tests of a file run at once: this one places its own).
    const busy = await api().post('/calls', { agent_id: agent.agentId, to: '+4790011001' });
    await waitForCallEnd(api(), busy.body.id, 60_000);
    const over = await stack.db.orm.em.fork().findOneOrFail(Call, { id: busy.body.id });
    assert.equal(over.mediaGateway, gateway.controlUrl);
    // A call ringing at this gateway (no far end will answer it): what may attach to it.
    const ringing = await createQueuedCall(stack.db.orm, agent, { to: '+4790011002' });
    await stack.db.orm.em
      .fork()
      .nativeUpdate(Call, { id: ringing.id }, { status: 'ringing', mediaGateway: gateway.controlUrl });
    const key = stack.settings.media.controlToken!;
    const expired = streamTokenFor(key, ringing.id, 30, Date.now() - 2 * 60_000);
    for (const [callId, token, why] of [
      [over.id, streamTokenFor(key, over.id, 30), 'the call is over'],
      [crypto.randomUUID(), TOKEN, 'no such call'],
      ['not-a-call', TOKEN, 'not a call id'],
      [over.id, 'not-the-token', 'a wrong token'],
      [ringing.id, TOKEN, 'the shared token attaches to no existing call'],
      [ringing.id, streamTokenFor(key, over.id, 30), 'another call’s own token'],
      [ringing.id, expired, 'its own token, expired (ring timeout + 60 s after the dial)'],
      [ringing.id, streamTokenFor('another-key', ringing.id, 30), 'made with another key'],
    ]) {
      const client = await MediaStreamsClient.connect(gateway.streamsUrl);
      client.start({ callId, token });
      const closed = await client.closed;
      assert.equal(closed.code, 1008, why);
      // The ringing call is attachable: only its token keeps it closed.
      if (callId === ringing.id) assert.equal(closed.reason, 'invalid token', why);
      assert.equal(gateway.context.sessions.get(callId), undefined, `no call audio was opened: ${why}`);
    }
    // The same refusals through the URL's ?token=: the shared token is let in to say `start`, and refused there.
    const viaQuery = await MediaStreamsClient.connect(`${gateway.streamsUrl}?token=${TOKEN}`);
    viaQuery.start({ callId: ringing.id });
    assert.deepEqual(await viaQuery.closed, { code: 1008, reason: 'invalid token' });
    const refusedAtOnce = await MediaStreamsClient.connect(`${gateway.streamsUrl}?token=${expired}`);
    assert.equal(
      (await refusedAtOnce.closed).code,
      1008,
      'an expired call token in the URL: closed before start',
    );
    await stack.db.orm.em.fork().nativeUpdate(Call, { id: ringing.id }, { status: 'failed' });
  });

  // The agent listens first, so the person's first line is a short "Hello?": it must be a turn
  // (lib/audio/turn-detector.ts, minTurnSpeechMs). When turns needed 300 ms of voice it was dropped
  // at some alignments of the VAD's windows, and this call hung in a third of the CI runs.
  test('a simulated person calling in (simulate inbound) speaks too', SPOKEN_CALL, async () => {
    const answer = await answerIncomingPhoneCall(
      { em: stack.db.orm.em.fork(), temporal: stack.client, settings: stack.settings },
      { to: agent.number, from: '+4791115555' },
    );
    assert.ok(answer.answered, JSON.stringify(answer));
    const ended = await spokenCallEnd(answer.callId);
    assert.equal(ended.status, 'completed', JSON.stringify(ended));
    assert.equal(ended.has_recording, true);
    const transcript = await api().get(`/calls/${answer.callId}/transcript`);
    const lines = transcript.body.data as { role: string; text: string }[];
    const person = lines
      .filter((l) => l.role === 'caller')
      .map((l) => l.text.toLowerCase())
      .join(' | ');
    // Their short first words are heard (the agent listens first), then their wishes.
    assert.match(person.split(' | ')[0] ?? '', /hello/, person);
    assert.match(person, /appointment|tuesday/, person);
    assert.match(person, /email/, person);
    await keepHistories(answer.callId, 'inbound-speaking');
  });

  test(
    'a caller on a plain Media Streams stream asks for a person: the front desk is rung as a leg of the call, joined in the gateway once it answers, and the two hear each other',
    SPOKEN_CALL,
    async () => {
      const desk = await createAgentFixture(stack.db.orm, {
        workspaceId: owner.workspaceId,
        firstMessage: 'Hello, Acme bookings.',
      });
      const ask = await speech.callerSays('Can I talk to a real person, please?');
      const { client, callId } = await callingIn(desk.number, '+4791234588');
      await client.agentFinished({ limitMs: 60_000, quietMs: 1500 });
      const askedAt = performance.now();
      await client.say(ask);
      const ended = await spokenCallEnd(callId);
      // Connected only once the front desk's (simulated) person answered: not at the hand-over.
      assert.equal(ended.end_reason, 'transferred', JSON.stringify(ended));
      assert.equal(ended.transfer.status, 'connected');
      assert.equal(ended.transfer.mode, 'cold');
      assert.equal(ended.transfer.to, stack.settings.transferNumber);
      assert.ok(Date.parse(ended.transfer.connected_at) >= Date.parse(ended.transfer.started_at));
      // The front desk's person was dialled through the carrier as a leg of this call, with audio.
      const history = await stack.client.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
      const legWorkflowId = history.events
        ?.map((event) => event.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId)
        .find(Boolean);
      const legId = legWorkflowId?.split('-consult-')[1];
      assert.ok(legId, 'no consultation leg was started');
      // The stream stays open: the person at the front desk speaks through it ("Hello?").
      let heard = '';
      for (let i = 0; i < 30 && !/hello/i.test(heard); i++) {
        await new Promise((resolve) => setTimeout(resolve, 2000));
        heard = await speech.transcribe(client.agentAudio(askedAt));
      }
      assert.match(heard, /hello/i, heard);
      const open = await Promise.race([client.closed.then(() => false), Promise.resolve(true)]);
      assert.ok(open, 'the caller’s stream was closed at the hand-over');
      // The caller hangs up: the bridge ends, the person's line is hung up (their far end is over)
      // and the bridge's length is counted as transfer seconds.
      client.stop();
      await stack.client.workflow.getHandle(farEndWorkflowId(legId)).result();
      await until(
        async () => ((await stack.db.orm.em.fork().findOne(Call, { id: callId }))?.transferSeconds ?? 0) > 0,
        'the bridge’s seconds were not stored',
      );
      const usage = await api().get('/usage');
      assert.ok(usage.body.transfer_seconds > 0, JSON.stringify(usage.body));
    },
  );

  test(
    'an nb-NO agent holds a spoken conversation in Norwegian: its voice is eSpeak NG’s Norwegian, the caller is heard by Whisper base in nb-NO, and the scripted agent answers in Norwegian',
    SPOKEN_CALL,
    async () => {
      const norsk = await createAgentFixture(stack.db.orm, {
        workspaceId: owner.workspaceId,
        language: 'nb-NO',
        firstMessage: 'Hei, du har ringt Acme. Hva kan jeg hjelpe deg med?',
      });
      const { client, callId } = await callingIn(norsk.number, '+4791234577');
      const [asked, scored] = [turnModelAnswers, scoredPauses];
      // The agent has no voice of its own: the speech server's voice of its language (espeak-nb).
      await client.agentFinished({ limitMs: 60_000, quietMs: 1500 });
      // eSpeak's robotic Norwegian over the phone line is heard only in part by Whisper base.
      const wordsOf = (text: string) => new Set(text.toLowerCase().match(/\p{L}+/gu) ?? []);
      const heardOf = (line: string, heard: string) =>
        [...wordsOf(line)].filter((w) => wordsOf(heard).has(w));
      const opening = await speech.transcribe(client.agentAudio(), 'nb-NO');
      const openingWords = heardOf('Hei, du har ringt Acme. Hva kan jeg hjelpe deg med?', opening);
      assert.ok(openingWords.length >= 2, `the opening heard as "${opening}"`);
      const askedAt = performance.now();
      await client.say(await speech.callerSays('Kan du ringe meg tilbake klokken tre?', 'espeak-nb'));
      await client.agentFinished({ limitMs: 60_000, quietMs: 1500, after: askedAt });
      const reply = await speech.transcribe(client.agentAudio(askedAt), 'nb-NO');
      const replyWords = heardOf('Flott. Skal jeg bekrefte det for deg?', reply);
      assert.ok(replyWords.length >= 2, `the reply heard as "${reply}"`);
      // Whisper base hears eSpeak's "Ha det bra." too seldom for the goodbye to end it: the caller hangs up.
      client.stop();
      const ended = await spokenCallEnd(callId);
      const lines = (await api().get(`/calls/${callId}/transcript`)).body.data as {
        role: string;
        text: string;
      }[];
      assert.equal(ended.end_reason, 'caller_hangup', JSON.stringify(lines));
      // The caller's line as Whisper base heard it in Norwegian; the agent's lines in its language.
      const callerLine = lines.find((line) => line.role === 'caller')?.text ?? '';
      const callerWords = heardOf('Kan du ringe meg tilbake klokken tre?', callerLine);
      assert.ok(callerWords.length >= 2, JSON.stringify(lines));
      assert.deepEqual(
        lines.filter((line) => line.role === 'agent').map((line) => line.text),
        ['Hei, du har ringt Acme. Hva kan jeg hjelpe deg med?', 'Flott. Skal jeg bekrefte det for deg?'],
      );
      // The caller's turn ended by the end-of-turn model (Smart Turn hears Norwegian too).
      assert.ok(turnModelAnswers > asked, 'the end-of-turn model was asked');
      // Whisper base's scores are not read (it is unsure of nearly every Norwegian turn): json only.
      assert.equal(scoredPauses, scored, 'no pause of the Norwegian call was scored');
    },
  );

  test(
    'a caller reading out a phone number with pauses is one turn: the end-of-turn model and the pause’s words keep it whole',
    SPOKEN_CALL,
    async () => {
      const desk = await createAgentFixture(stack.db.orm, {
        workspaceId: owner.workspaceId,
        firstMessage: 'Hi, this is Acme. How can I help you?',
      });
      const { client, callId } = await callingIn(desk.number, '+4791234578');
      await client.agentFinished({ limitMs: 60_000, quietMs: 1500 });
      const [asked, scored] = [turnModelAnswers, scoredPauses];
      // Each group said on its own (a falling, final voice) and 800 ms of silence after it: the
      // model may call a group complete, the words ("… is 47.") say a number is still being read out.
      const groups = ['My number is four seven.', 'nine one two.', 'three four five six seven.'];
      const said = await Promise.all(groups.map((group) => speech.callerSays(group)));
      const { audio: line } = timeline(
        said.flatMap((part, i): TimelinePart[] => [...(i === 0 ? [] : [{ quietMs: 800 }]), { speech: part }]),
      );
      const saidAt = performance.now();
      await client.say(line);
      await client.agentFinished({ limitMs: 60_000, quietMs: 1500, after: saidAt });
      client.stop();
      await spokenCallEnd(callId);
      const lines = (await api().get(`/calls/${callId}/transcript`)).body.data as {
        role: string;
        text: string;
      }[];
      const callerLines = lines.filter((l) => l.role === 'caller').map((l) => l.text);
      assert.equal(callerLines.length, 1, JSON.stringify(lines));
      // Whisper writes the digits as it likes ("47 912 34567", "four seven"): all ten are in the one line.
      const words = new RegExp(`\\b(${DIGIT_WORDS.join('|')})\\b`, 'g');
      const digits = callerLines[0]
        .toLowerCase()
        .replace(words, (word) => String(DIGIT_WORDS.indexOf(word)))
        .replace(/\D/g, '');
      assert.ok(digits.length >= 9, `the caller's line "${callerLines[0]}"`);
      assert.ok(turnModelAnswers > asked, 'the end-of-turn model was asked at the pauses');
      // The local speech (VOICE_SPEECH=local) scored the English pauses: its doubt is read too.
      assert.ok(scoredPauses > scored, 'the pauses were transcribed with Whisper’s score');
    },
  );

  test('a busy line and one that declines fail as before: no stream, no recording', async () => {
    const [busy, declines] = await Promise.all(
      ['+4790001001', '+4790001003'].map((to) => api().post('/calls', { agent_id: agent.agentId, to })),
    );
    const [busyEnd, declinedEnd] = await Promise.all(
      [busy, declines].map((res) => waitForCallEnd(api(), res.body.id, 60_000)),
    );
    assert.deepEqual([busyEnd.status, busyEnd.end_reason], ['failed', 'busy']);
    assert.deepEqual([declinedEnd.status, declinedEnd.end_reason], ['failed', 'no_answer']);
    for (const ended of [busyEnd, declinedEnd]) assert.equal(ended.has_recording, false);
    // Only these two calls' sessions: an earlier test's call may still be closing.
    for (const ended of [busyEnd, declinedEnd])
      assert.equal(gateway.context.sessions.get(ended.id), undefined);
  });
});
