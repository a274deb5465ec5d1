import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import wavefile from 'wavefile';
import { Agent, Call } from '../db/entities/index.js';
import { streamTokenFor } from '../lib/media/stream-token.js';
import { recordingPath } from '../lib/recordings/recording-files.js';
import { loadSettings } from '../lib/settings.js';
import { transferFailedLine } from '../lib/voice-runtime/transfer-failed.js';
import { freePort } from '../scripts/processes.js';
import { resolveSipSide } from '../scripts/sip-side.js';
import { createFixture, type Fixture } from './support/api.js';
import { type Baresip, onPath, startBaresip } from './support/baresip.js';
import { type AgentFixture, createAgentFixture } from './support/call-fixtures.js';
import { type CallStack, startCallStack, waitForCallEnd } from './support/call-stack.js';
import { startTestMediaGateway, type TestMediaGateway, testMediaSettings } from './support/media-gateway.js';
import { startTestSipSide, type TestSipSide } from './support/sip-side.js';
import { runSippDoubleInvite, runSippInvites, startSippFarEnd } from './support/sipp.js';
import { startTestSpeech, type TestSpeech } from './support/speech-kit.js';
import { callTo, until } from './support/wait-for.js';

// CARRIER=sip end to end over loopback (voice-media v1 section 6, docs/sip.md): the SIP side
// (sip/, built and run as npm start runs it) between Debian's baresip as the phone network's far
// end and the media gateway, with the real local speech server, PostgreSQL, Temporal and the call
// workflow. baresip auto-answers (or rings), plays a Piper-made caller line from a WAV and records
// what it hears; that recording is transcribed back to the agent's words.

const TOKEN = 'sip-test-token-7d2e90';
/** SIP_CONTROL_TOKEN: the control API's own secret, which the workers present. */
const CONTROL_TOKEN = 'sip-control-token-41c8aa';
const missing = ['baresip', 'sipp', 'go'].filter((program) => !onPath(program));
const skip = missing.length
  ? `${missing.join(', ')} not installed (apt-get install baresip-core sip-tester golang; .ci/run installs the first two)`
  : false;

let stack: CallStack;
let gateway: TestMediaGateway;
let speech: TestSpeech;
let sipSide: TestSipSide | undefined;
let work: string;
let owner: Fixture;
let agent: AgentFixture;
let sipPort: number;
let controlUrl: string;
let gatewayUrl: string;
const farEnds: Baresip[] = [];

const OUTBOUND_OPENING = 'Hello, this is Ada from Acme calling about your booking for Friday.';
const INBOUND_OPENING = 'Thanks for calling Acme. My name is Ada, and I can help you with your booking.';

/** The SIP side with the trunk at `trunkPort` (restarted when a test needs another far end). */
async function sipSideWithTrunk(trunkPort: number, env: Record<string, string> = {}): Promise<void> {
  await sipSide?.stop();
  const rtp = 40_000 + Math.floor(Math.random() * 100) * 100;
  sipSide = await startTestSipSide({
    SIP_LISTEN: `127.0.0.1:${sipPort}`,
    SIP_TRUNK_URI: `sip:127.0.0.1:${trunkPort}`,
    RTP_PORTS: `${rtp}-${rtp + 99}`,
    SIP_CONTROL_URL: controlUrl,
    MEDIA_GATEWAY_URL: gatewayUrl,
    MEDIA_STREAMS_TOKEN: TOKEN,
    MEDIA_CONTROL_URL: gateway.controlUrl,
    MEDIA_CONTROL_TOKEN: stack.settings.media.controlToken!,
    SIP_CONTROL_TOKEN: CONTROL_TOKEN,
    SIP_RTP_TIMEOUT_MS: '4000',
    ...env,
  });
}

/** A WAV baresip plays as the person: `lead` seconds of silence, the line, then `tail` seconds of silence. */
async function personWav(name: string, line: string | null, lead: number, tail: number): Promise<string> {
  const spoken = line ? await speech.callerSays(line) : new Int16Array(0);
  const samples = new Int16Array(8000 * (lead + tail) + spoken.length);
  samples.set(spoken, 8000 * lead);
  const wav = new wavefile.WaveFile();
  wav.fromScratch(1, 8000, '16', samples);
  const file = path.join(work, `${name}.wav`);
  await writeFile(file, wav.toBuffer());
  return file;
}

async function farEnd(
  name: string,
  options: {
    play: string;
    answer: 'auto' | 'manual';
    user?: string;
    codecs?: string;
    callTransfer?: boolean;
  },
): Promise<Baresip> {
  const far = await startBaresip({ dir: path.join(work, name), ...options });
  farEnds.push(far);
  return far;
}

/**
 * POST /calls to `to`, an auto-answering baresip as the trunk playing `play` (default: silence);
 * resolves once it picked up.
 */
async function answeredOutboundCall(name: string, to: string, play?: string) {
  play ??= await personWav('silence', null, 0, 60);
  const far = await farEnd(name, { play, answer: 'auto', user: to });
  await sipSideWithTrunk(far.port);
  const api = stack.api.client(owner.secret);
  const created = await api.post('/calls', { agent_id: agent.agentId, to });
  assert.equal(created.status, 202, created.text);
  const established = await far.waitForEvent('CALL_ESTABLISHED', 30_000);
  return { far, api, callId: created.body.id as string, established };
}

/** POST /calls to `to` (ring timeout 10 s, the least) and the call once it ended. */
async function placedCallEnd(to: string, body: Record<string, unknown> = { ring_timeout_seconds: 10 }) {
  const api = stack.api.client(owner.secret);
  const created = await api.post('/calls', { agent_id: agent.agentId, to, ...body });
  assert.equal(created.status, 202, created.text);
  return waitForCallEnd(api, created.body.id, 40_000);
}

/** What baresip heard (its `-dec.wav` recording), as 8 kHz samples. */
async function heardBy(far: Baresip): Promise<Int16Array> {
  const file = (await readdir(far.dir)).find((name) => name.startsWith('dump-') && name.endsWith('-dec.wav'));
  assert.ok(file, `no recording in ${far.dir}: ${(await readdir(far.dir)).join(', ')}`);
  const wav = new wavefile.WaveFile(await readFile(path.join(far.dir, file)));
  wav.toBitDepth('16');
  const fmt = wav.fmt as { sampleRate: number };
  assert.equal(fmt.sampleRate, 8000);
  return Int16Array.from(wav.getSamples(false, Int16Array) as unknown as Int16Array);
}

function loudness(samples: Int16Array): number {
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

before(async () => {
  if (skip) return;
  work = await mkdtemp(path.join(tmpdir(), 'sip-carrier-'));
  const defaults = loadSettings({});
  const [gatewayPort, controlPort, mediaControlPort] = [await freePort(), await freePort(), await freePort()];
  sipPort = await freePort();
  gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  controlUrl = `http://127.0.0.1:${controlPort}`;
  [stack, speech] = await Promise.all([
    startCallStack({
      prefix: 'sip-carrier',
      simTimeScale: 1,
      settings: {
        media: {
          ...testMediaSettings(defaults.media, {
            streamsToken: TOKEN,
            port: gatewayPort,
            controlPort: mediaControlPort,
          }),
          carrier: 'sip',
          sip: { ...defaults.media.sip, controlUrl, controlToken: CONTROL_TOKEN },
        },
        recordingsDir: path.join(work, 'recordings'),
      },
    }),
    startTestSpeech(),
    // Built (or found in the cache) here, so a first build on a machine is no test's time.
    resolveSipSide(),
  ]);
  gateway = await startTestMediaGateway(stack, speech, undefined, {
    port: gatewayPort,
    controlPort: mediaControlPort,
  });
  owner = await createFixture(stack.db.orm, { requestsPerSecond: 10_000 });
  agent = await createAgentFixture(stack.db.orm, {
    workspaceId: owner.workspaceId,
    firstMessage: INBOUND_OPENING,
    outboundFirstMessage: OUTBOUND_OPENING,
  });
});

after(async () => {
  for (const far of farEnds) await far.stop();
  await sipSide?.stop();
  await gateway?.close();
  await stack?.close();
  await speech?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

// The suite holds every test of the file (about 3½ minutes here): its own time limit is the sum's, each test keeps npm test's 120 s.
describe('CARRIER=sip', { skip, timeout: 600_000 }, () => {
  test('an outbound call to a far end that picks up: each hears the other, the person hangs up; the call is recorded', async () => {
    // The person says a line after the agent's opening, then hangs up.
    const line = await personWav('monday', 'Could we move it to Monday morning?', 7, 60);
    const { far, api, callId, established } = await answeredOutboundCall('outbound', '+4791230001', line);
    assert.match(String(established.peeruri ?? ''), /127\.0\.0\.1/);
    await new Promise((resolve) => setTimeout(resolve, 13_000));
    await far.command('hangup');
    const ended = await waitForCallEnd(api, callId, 60_000);
    assert.equal(ended.status, 'completed', JSON.stringify(ended));
    assert.equal(ended.end_reason, 'caller_hangup');
    // Silent as it picked up (the person waits to hear who calls): a person, heard by the gateway.
    assert.equal(ended.answered_by, 'human');
    const heard = await heardBy(far);
    assert.ok(loudness(heard) > 200, `far end heard silence (rms ${loudness(heard)})`);
    const words = await speech.transcribe(heard);
    assert.match(words, /acme|booking|friday/, words);
    // What the person said went up the other way: a caller line of the transcript.
    const transcript = await api.get(`/calls/${callId}/transcript`);
    const said = (transcript.body.data as { role: string; text: string }[])
      .filter((entry) => entry.role === 'caller')
      .map((entry) => entry.text.toLowerCase())
      .join(' ');
    assert.match(said, /monday|move/, JSON.stringify(transcript.body));
    const call = await stack.db.orm.em.fork().findOneOrFail(Call, { id: callId });
    assert.equal(call.direction, 'outbound');
    const wav = new wavefile.WaveFile(await readFile(recordingPath(path.join(work, 'recordings'), callId)));
    const fmt = wav.fmt as { numChannels: number; sampleRate: number };
    assert.deepEqual([fmt.numChannels, fmt.sampleRate], [2, 8000]);
    // Channel 1 the person (their line), channel 2 the agent (its opening): both carry speech.
    const [person, agentSide] = wav.getSamples(false, Int16Array) as unknown as Int16Array[];
    assert.ok(loudness(person) > 100, `the person's channel is silent (rms ${loudness(person)})`);
    assert.ok(loudness(agentSide) > 100, `the agent's channel is silent (rms ${loudness(agentSide)})`);
  });

  test('an inbound call (PCMA) to a workspace number reaches its agent, who hangs up after goodbye', async () => {
    const goodbye = await personWav('goodbye', 'Thank you, goodbye.', 12, 30);
    // A-law only: the SIP side transcodes to the gateway's μ-law and back.
    const far = await farEnd('inbound', { play: goodbye, answer: 'auto', codecs: 'PCMA' });
    await sipSideWithTrunk(far.port);
    const digits = agent.number.slice(1);
    await far.command('dial', `sip:${digits}@127.0.0.1:${sipPort}`);
    await far.waitForEvent('CALL_ESTABLISHED', 30_000);
    const call = await callTo(stack.db.orm, agent.number);
    assert.equal(call.direction, 'inbound');
    assert.equal(call.channel, 'phone');
    const closed = await far.waitForEvent('CALL_CLOSED', 90_000);
    const ended = await waitForCallEnd(stack.api.client(owner.secret), call.id, 60_000);
    assert.equal(
      ended.end_reason,
      'agent_hangup',
      `${JSON.stringify({ ended, closed })}\n${sipSide?.output()}`,
    );
    const words = await speech.transcribe(await heardBy(far));
    assert.match(words, /calling|acme|booking/, words);
  });

  describe('calls that are not answered', () => {
    const cases = [
      { status: 486, reason: 'busy' },
      { status: 600, reason: 'busy' },
      { status: 480, reason: 'no_answer' },
      { status: 408, reason: 'no_answer' },
      { status: 603, reason: 'not_connected' },
      { status: 404, reason: 'not_connected' },
    ] as const;
    for (const { status, reason } of cases) {
      test(`a far end that rings, then answers ${status}: the call fails ${reason}`, async () => {
        const far = await startSippFarEnd(work, status);
        try {
          await sipSideWithTrunk(far.port);
          const ended = await placedCallEnd('+4791230002', {});
          assert.equal(ended.status, 'failed');
          assert.equal(ended.end_reason, reason, JSON.stringify(ended));
          assert.equal(await far.exited, 0, far.output());
        } finally {
          far.stop();
        }
      });
    }

    test('a far end that rings and never answers is CANCELed at the ring timeout: no_answer', async () => {
      const far = await startSippFarEnd(work, 'ring');
      try {
        await sipSideWithTrunk(far.port);
        const ended = await placedCallEnd('+4791230003');
        assert.equal(ended.status, 'failed');
        assert.equal(ended.end_reason, 'no_answer');
        // sipp got the CANCEL (its scenario ends only after CANCEL, 487 and ACK).
        assert.equal(await far.exited, 0, far.output());
        assert.equal(JSON.parse(await (await fetch(`${controlUrl}/healthz`)).text()).placed, 0);
      } finally {
        far.stop();
      }
    });
  });

  test('an answering machine takes the call: its greeting and its beep are heard, the agent leaves its message after the beep and the call ends voicemail', async () => {
    const api = stack.api.client(owner.secret);
    const caller = await createAgentFixture(stack.db.orm, {
      workspaceId: owner.workspaceId,
      outboundFirstMessage: OUTBOUND_OPENING,
    });
    const message = 'Hi Kari, this is Ada from Acme. Please call us back about your booking on Friday.';
    const patched = await api.patch(`/agents/${caller.agentId}`, {
      voicemail: { detect: true, action: 'leave_message', message },
    });
    assert.equal(patched.status, 200, patched.text);
    // The machine greets at once, then beeps (1 kHz, 0.5 s) and records.
    const greeting = await speech.callerSays(
      'Hi, you have reached Kari. I cannot take your call right now. Please leave a message after the tone.',
    );
    const beepAt = 2400 + greeting.length;
    const samples = new Int16Array(beepAt + 8000 * 25);
    samples.set(greeting, 2400);
    for (let i = 0; i < 4000; i++)
      samples[beepAt + i] = Math.round(12_000 * Math.sin((2 * Math.PI * 1000 * i) / 8000));
    const wav = new wavefile.WaveFile();
    wav.fromScratch(1, 8000, '16', samples);
    const play = path.join(work, 'machine.wav');
    await writeFile(play, wav.toBuffer());
    const far = await farEnd('machine', { play, answer: 'auto', user: '+4791230009' });
    await sipSideWithTrunk(far.port);
    const created = await api.post('/calls', { agent_id: caller.agentId, to: '+4791230009' });
    assert.equal(created.status, 202, created.text);
    const ended = await waitForCallEnd(api, created.body.id, 60_000);
    const transcript = (await api.get(`/calls/${created.body.id}/transcript`)).body.data as {
      role: string;
      text: string;
    }[];
    assert.equal(ended.end_reason, 'voicemail', `${JSON.stringify(transcript)}\n${sipSide?.output()}`);
    assert.equal(ended.answered_by, 'machine');
    assert.equal(ended.analysis.outcome, 'unknown');
    assert.match(
      transcript
        .filter((line) => line.role === 'caller')
        .map((line) => line.text)
        .join(' '),
      /reached|message|tone/i,
      'the greeting is in the transcript',
    );
    assert.equal(transcript.at(-1)?.role, 'agent');
    assert.equal(transcript.at(-1)?.text, message);
    // The machine recorded the message after its beep: nothing of the opening line before it.
    await far.waitForEvent('CALL_CLOSED', 15_000);
    const heard = await speech.transcribe(await heardBy(far));
    assert.match(heard, /call us back|booking/, heard);
    assert.doesNotMatch(
      heard,
      /calling about your booking for friday/,
      'the opening was not said to the machine',
    );
  });

  test('the keypad both ways (RFC 4733): the agent presses a phone menu’s choice, the far end’s keys are a caller line', async () => {
    const api = stack.api.client(owner.secret);
    const menuAgent = await createAgentFixture(stack.db.orm, {
      workspaceId: owner.workspaceId,
      outboundFirstMessage: OUTBOUND_OPENING,
    });
    // No answering-machine screen here (its own test is above): the menu talks over the opening.
    const patched = await api.patch(`/agents/${menuAgent.agentId}`, {
      keypad: { send: true },
      voicemail: { detect: false, action: 'hang_up', message: null },
    });
    assert.equal(patched.status, 200, patched.text);
    const menu = await personWav('menu', 'For sales, press 1. For support, press 2.', 2, 60);
    const far = await farEnd('menu', { play: menu, answer: 'auto', user: '+4791230011' });
    await sipSideWithTrunk(far.port);
    const created = await api.post('/calls', { agent_id: menuAgent.agentId, to: '+4791230011' });
    assert.equal(created.status, 202, created.text);
    // The agent presses the menu's first choice.
    const pressed = await far.waitForEvent('CALL_DTMF_START', 45_000).catch(async (error: Error) => {
      // What the agent heard tells why it pressed nothing.
      const heard = (await api.get(`/calls/${created.body.id}/transcript`)).body.data;
      throw new Error(
        `${error.message}\ntranscript: ${JSON.stringify(heard)}\n${sipSide?.output().slice(-3000)}`,
      );
    });
    assert.equal(pressed.param, '1', JSON.stringify(pressed));
    // The far end presses keys: RFC 4733 events to the SIP side, `dtmf` to the gateway, one caller line.
    assert.ok((await far.command('sndcode', '42#')).ok);
    const keypadLine = async () =>
      (
        (await api.get(`/calls/${created.body.id}/transcript`)).body.data as { role: string; text: string }[]
      ).some((line) => line.role === 'caller' && line.text === '[keypad] 4 2');
    await until(keypadLine, () => `no [keypad] 4 2 line\n${sipSide?.output()}`, {
      limitMs: 20_000,
      everyMs: 250,
    });
    await far.command('hangup');
    await waitForCallEnd(api, created.body.id, 30_000);
    const transcript = (await api.get(`/calls/${created.body.id}/transcript`)).body.data as {
      text: string;
    }[];
    assert.ok(
      transcript.some((line) => line.text === '[keypad] 1'),
      JSON.stringify(transcript),
    );
  });

  test('a transfer is a REFER to the far end, whose phone calls the target: once its NOTIFY says it answered, BYE, and the call ends transferred', async () => {
    const ask = await personWav('ask', 'Can I talk to a real person, please?', 12, 30);
    // A number of its own: callTo finds the first call to a number.
    const other = await createAgentFixture(stack.db.orm, {
      workspaceId: owner.workspaceId,
      firstMessage: INBOUND_OPENING,
    });
    // The trunk is the target (a baresip that answers); the caller's phone, taking the REFER, calls it.
    const desk = await farEnd('transfer-desk', {
      play: await personWav('silence', null, 0, 60),
      answer: 'auto',
      user: stack.settings.transferNumber!,
    });
    await sipSideWithTrunk(desk.port);
    const far = await farEnd('transfer', { play: ask, answer: 'auto' });
    await far.command('dial', `sip:${other.number}@127.0.0.1:${sipPort}`);
    await far.waitForEvent('CALL_ESTABLISHED', 30_000);
    const call = await callTo(stack.db.orm, other.number);
    const transfer = await far.waitForEvent('TRANSFER', 90_000);
    assert.match(JSON.stringify(transfer), new RegExp(stack.settings.transferNumber!.replace('+', '\\+')));
    const ended = await waitForCallEnd(stack.api.client(owner.secret), call.id, 60_000);
    const transcript = await stack.api.client(owner.secret).get(`/calls/${call.id}/transcript`);
    assert.equal(ended.end_reason, 'transferred', `${JSON.stringify(transcript.body)}\n${sipSide?.output()}`);
    // Transferred only once baresip's NOTIFY said its call to the target was answered.
    await desk.waitForEvent('CALL_ESTABLISHED', 10_000);
    assert.equal(ended.transfer.status, 'connected');
    assert.match(sipSide?.output() ?? '', /"msg":"REFER taken"[^\n]*"connected":true/);
  });

  test('a warm transfer: the front desk is dialled through the trunk as a leg of the call, briefed by the agent, then joined to the caller by the SIP side', async () => {
    const deskNumber = stack.settings.transferNumber!;
    // The person at the desk answers, hears the briefing out, then speaks (to the caller by then).
    const target = await farEnd('warm-desk', {
      play: await personWav(
        'warm-desk',
        'Front desk, this is Maria speaking. How can I help you today?',
        22,
        60,
      ),
      answer: 'auto',
      user: deskNumber,
    });
    await sipSideWithTrunk(target.port);
    const other = await createAgentFixture(stack.db.orm, {
      workspaceId: owner.workspaceId,
      firstMessage: INBOUND_OPENING,
    });
    await stack.db.orm.em.fork().nativeUpdate(
      Agent,
      { id: other.agentId },
      {
        transferDestinations: [
          { number: deskNumber, description: 'the front desk', mode: 'warm', message: null },
        ],
      },
    );
    const caller = await farEnd('warm-caller', {
      play: await personWav('warm-ask', 'Can I talk to a real person, please?', 12, 90),
      answer: 'auto',
    });
    await caller.command('dial', `sip:${other.number}@127.0.0.1:${sipPort}`);
    await caller.waitForEvent('CALL_ESTABLISHED', 30_000);
    const call = await callTo(stack.db.orm, other.number);
    const api = stack.api.client(owner.secret);
    const ended = await waitForCallEnd(api, call.id, 120_000);
    assert.equal(ended.end_reason, 'transferred', `${JSON.stringify(ended)}\n${sipSide?.output()}`);
    assert.deepEqual(
      [ended.transfer.mode, ended.transfer.status],
      ['warm', 'connected'],
      `${JSON.stringify(ended.transfer)}\n${JSON.stringify((await api.get(`/calls/${call.id}/transcript`)).body.data)}\n${sipSide?.output()}`,
    );
    // No REFER: the caller's phone was never handed anywhere; the desk got its own INVITE through the trunk.
    assert.equal(caller.events.filter((event) => event.type === 'TRANSFER').length, 0);
    await target.waitForEvent('CALL_ESTABLISHED', 10_000);
    // Both legs are the SIP side's calls: it joined their RTP itself (sip/join.go), not the gateway.
    assert.match(sipSide?.output() ?? '', /"msg":"transfer bridged"[^\n]*"leg":"/, sipSide?.output());
    // The caller hears the desk through that bridge (its line comes 22 s after it answered, once
    // briefed); then hangs up, which hangs up the desk.
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    await caller.command('hangup');
    await target.waitForEvent('CALL_CLOSED', 15_000);
    const heardByCaller = await speech.transcribe(await heardBy(caller));
    assert.match(
      heardByCaller,
      /front desk|maria/i,
      `${heardByCaller}\n${JSON.stringify(target.events.slice(-3))}\n${sipSide?.output()}`,
    );
    // The desk heard the briefing, made from what the caller said, before anyone else.
    const heardByDesk = await speech.transcribe(await heardBy(target));
    assert.match(heardByDesk, /ada|real person|calling/i, heardByDesk);
    await until(
      async () =>
        ((await stack.db.orm.em.fork().findOneOrFail(Call, { id: call.id })).transferSeconds ?? 0) > 0,
      'the bridge’s seconds were not stored',
    );
  });

  describe('a far end that refuses REFER', () => {
    /** An inbound call from a baresip that refuses REFER, asking for a person, once it ended transferred; its call id. */
    async function refusedTransfer(
      name: string,
      codecs?: string,
    ): Promise<{ caller: Baresip; callId: string }> {
      const ask = await personWav('ask', 'Can I talk to a real person, please?', 12, 60);
      const other = await createAgentFixture(stack.db.orm, {
        workspaceId: owner.workspaceId,
        firstMessage: INBOUND_OPENING,
      });
      const caller = await farEnd(name, { play: ask, answer: 'auto', callTransfer: false, codecs });
      await caller.command('dial', `sip:${other.number}@127.0.0.1:${sipPort}`);
      await caller.waitForEvent('CALL_ESTABLISHED', 30_000);
      const call = await callTo(stack.db.orm, other.number);
      const ended = await waitForCallEnd(stack.api.client(owner.secret), call.id, 90_000);
      assert.equal(ended.end_reason, 'transferred', `${JSON.stringify(ended)}\n${sipSide?.output()}`);
      return { caller, callId: call.id };
    }

    for (const { hangsUp, codecs } of [
      { hangsUp: 'target', codecs: 'PCMU,PCMA' },
      { hangsUp: 'caller', codecs: 'PCMA' },
      { hangsUp: 'limit', codecs: 'PCMU' },
    ] as const) {
      const how =
        hangsUp === 'limit' ? 'TRANSFER_MAX_MINUTES ends both' : `a BYE from the ${hangsUp} ends the other`;
      test(`the SIP side calls the target through the trunk and bridges the two (caller ${codecs.slice(0, 4)}); ${how}; its seconds count in GET /usage`, async () => {
        const desk = await personWav(
          'desk',
          'Front desk, this is Maria speaking. How can I help you today?',
          1,
          60,
        );
        const target = await farEnd(`transfer-target-${hangsUp}`, {
          play: desk,
          answer: 'auto',
          user: stack.settings.transferNumber!,
        });
        // The bound: 9 s here (60 minutes by default).
        await sipSideWithTrunk(target.port, hangsUp === 'limit' ? { TRANSFER_MAX_MINUTES: '0.15' } : {});
        const usageBefore = (await stack.api.client(owner.secret).get('/usage')).body.transfer_seconds;
        const { caller, callId } = await refusedTransfer(`transfer-refused-${hangsUp}`, codecs);
        // The target got the INVITE through the trunk address and answered.
        const established = await target.waitForEvent('CALL_ESTABLISHED', 30_000);
        assert.match(String(established.peeruri ?? ''), /127\.0\.0\.1/);
        if (hangsUp === 'limit') {
          await Promise.all([
            caller.waitForEvent('CALL_CLOSED', 30_000),
            target.waitForEvent('CALL_CLOSED', 30_000),
          ]);
        } else {
          await new Promise((resolve) => setTimeout(resolve, 8000));
          const [ends, other] = hangsUp === 'target' ? [target, caller] : [caller, target];
          assert.equal(
            other.events.filter((event) => event.type === 'CALL_CLOSED').length,
            0,
            'hung up too early',
          );
          await ends.command('hangup');
          await other.waitForEvent('CALL_CLOSED', 15_000);
        }
        // What the caller heard ends with the target's line: the agent's opening, then the desk
        // ("Front desk, this is Maria speaking.", which Whisper has heard as "front-esque. this is
        // bia speaking." through the bridge: any of its three parts is the desk's).
        const words = await speech.transcribe(await heardBy(caller));
        assert.match(words, /front desk|maria|this is \w+ speaking/, `${words}\n${sipSide?.output()}`);
        assert.match(sipSide?.output() ?? '', new RegExp(`"msg":"transfer over"[^\n]*"by":"${hangsUp}"`));
        // The bridged leg's seconds reach the call (transfer_ended) and GET /usage, apart from minutes.
        const seconds = Number(
          /"msg":"transfer over"[^\n]*"seconds":([\d.]+)/.exec(sipSide?.output() ?? '')?.[1] ?? Number.NaN,
        );
        const stored = async () =>
          (await stack.db.orm.em.fork().findOneOrFail(Call, { id: callId })).transferSeconds;
        await until(async () => (await stored()) > 0, 'transfer_ended stored on the call');
        assert.equal(await stored(), Math.round(seconds));
        if (hangsUp === 'limit') assert.ok(seconds >= 9 && seconds < 12, `bounded at 9 s: ${seconds}`);
        else assert.ok(seconds >= 8, `bridged about 8 s: ${seconds}`);
        const usage = (await stack.api.client(owner.secret).get('/usage')).body;
        assert.equal(usage.transfer_seconds, usageBefore + Math.round(seconds));
      });
    }

    test('a target that answers busy: the transfer failed (busy), the agent tells the caller and the call goes on', async () => {
      const target = await startSippFarEnd(work, 486);
      try {
        await sipSideWithTrunk(target.port);
        const api = stack.api.client(owner.secret);
        const ask = await personWav('ask', 'Can I talk to a real person, please?', 12, 60);
        const other = await createAgentFixture(stack.db.orm, {
          workspaceId: owner.workspaceId,
          firstMessage: INBOUND_OPENING,
        });
        const caller = await farEnd('transfer-busy', { play: ask, answer: 'auto', callTransfer: false });
        await caller.command('dial', `sip:${other.number}@127.0.0.1:${sipPort}`);
        await caller.waitForEvent('CALL_ESTABLISHED', 30_000);
        const call = await callTo(stack.db.orm, other.number);
        await until(
          async () => (await api.get(`/calls/${call.id}`)).body.transfer?.status === 'failed',
          () => `the transfer did not fail\n${sipSide?.output()}`,
          { limitMs: 90_000, everyMs: 250 },
        );
        const live = (await api.get(`/calls/${call.id}`)).body;
        assert.equal(live.status, 'in_progress', 'the caller is still with the agent');
        assert.equal(live.transfer.failure, 'busy');
        // The agent tells the caller, who is still on the line.
        await until(
          async () =>
            (await api.get(`/calls/${call.id}/transcript`)).body.data.some((line: { text: string }) =>
              /isn't available|ikke tilgjengelig/.test(line.text),
            ),
          'the agent did not tell the caller',
          { limitMs: 30_000, everyMs: 250 },
        );
        assert.equal(caller.events.filter((event) => event.type === 'CALL_CLOSED').length, 0);
        await caller.command('hangup');
        const ended = await waitForCallEnd(api, call.id, 30_000);
        assert.equal(ended.end_reason, 'caller_hangup');
        // sipp's scenario ran as written: it got the INVITE, answered 180 and 486, and the ACK came.
        assert.equal(await target.exited, 0, target.output());
        assert.match(sipSide?.output() ?? '', /transfer target refused/);
      } finally {
        target.stop();
      }
    });

    test('a target the check refuses when it is used is never dialled: no REFER, no INVITE through the trunk, the agent says so and the call goes on', async () => {
      // Set when London was allowed (or written past the API); the workspace may not dial GB now.
      const london = '+447700900123';
      const desk = await personWav(
        'desk',
        'Front desk, this is Maria speaking. How can I help you today?',
        1,
        60,
      );
      const trunk = await farEnd('refused-target-trunk', { play: desk, answer: 'auto', user: london });
      await sipSideWithTrunk(trunk.port);
      const api = stack.api.client(owner.secret);
      const ask = await personWav('ask', 'Can I talk to a real person, please?', 12, 60);
      const other = await createAgentFixture(stack.db.orm, {
        workspaceId: owner.workspaceId,
        firstMessage: INBOUND_OPENING,
      });
      const em = stack.db.orm.em.fork();
      const agent = await em.findOneOrFail(Agent, { id: other.agentId });
      agent.transferDestinations = [
        { number: london, description: 'London office', mode: 'cold', message: null },
      ];
      await em.flush();
      const caller = await farEnd('refused-target-caller', {
        play: ask,
        answer: 'auto',
        callTransfer: false,
      });
      await caller.command('dial', `sip:${other.number}@127.0.0.1:${sipPort}`);
      await caller.waitForEvent('CALL_ESTABLISHED', 30_000);
      const call = await callTo(stack.db.orm, other.number);
      await until(
        async () => (await api.get(`/calls/${call.id}`)).body.transfer?.status === 'failed',
        () => `the transfer was not refused\n${sipSide?.output()}`,
        { limitMs: 90_000, everyMs: 250 },
      );
      const live = (await api.get(`/calls/${call.id}`)).body;
      assert.equal(live.status, 'in_progress', 'the caller is still with the agent');
      assert.deepEqual([live.transfer.to, live.transfer.failure], [london, 'not_allowed']);
      // The fixture's agent speaks en-US.
      const refusedLine = transferFailedLine('en-US');
      await until(
        async () =>
          (await api.get(`/calls/${call.id}/transcript`)).body.data.some(
            (line: { role: string; text: string }) => line.role === 'agent' && line.text === refusedLine,
          ),
        'the agent did not tell the caller',
        { limitMs: 30_000, everyMs: 250 },
      );
      await caller.command('hangup');
      const ended = await waitForCallEnd(api, call.id, 30_000);
      assert.equal(ended.end_reason, 'caller_hangup');
      // Nothing reached the SIP side's transfer: no REFER to the caller, no INVITE through the trunk.
      assert.equal(caller.events.filter((event) => event.type === 'TRANSFER').length, 0);
      assert.equal(trunk.events.filter((event) => /CALL_(INCOMING|ESTABLISHED)/.test(event.type)).length, 0);
      assert.doesNotMatch(sipSide?.output() ?? '', /"msg":"(REFER|transfer)/);
    });
  });

  describe('digest credentials', () => {
    for (const { password, reason } of [
      { password: 'secret', reason: 'busy' },
      { password: 'wrong', reason: 'not_connected' },
    ]) {
      test(`the trunk asks (401); with ${password === 'secret' ? 'the right' : 'wrong'} credentials the call is ${reason}`, async () => {
        const far = await startSippFarEnd(work, 'digest');
        try {
          await sipSideWithTrunk(far.port, { SIP_USERNAME: 'user', SIP_PASSWORD: password });
          const ended = await placedCallEnd('+4791230005', {});
          assert.equal(
            ended.end_reason,
            reason,
            `${JSON.stringify(ended)}\n${far.output()}\n${sipSide?.output()}`,
          );
          assert.equal(await far.exited, 0, far.output());
        } finally {
          far.stop();
        }
      });
    }
  });

  test('a second INVITE of a call being taken (same Call-ID, new branch) is refused 482: one call', async () => {
    const other = await createAgentFixture(stack.db.orm, {
      workspaceId: owner.workspaceId,
      firstMessage: INBOUND_OPENING,
    });
    // No call goes out here: the trunk is never dialled.
    await sipSideWithTrunk(9);
    const caller = await runSippDoubleInvite(work, { port: sipPort, user: other.number });
    assert.equal(caller.code, 0, caller.output);
    const calls = await stack.db.orm.em.fork().find(Call, { toNumber: other.number });
    assert.equal(calls.length, 1);
    const ended = await waitForCallEnd(stack.api.client(owner.secret), calls[0].id, 30_000);
    assert.equal(ended.end_reason, 'caller_hangup');
  });

  test('a trunk that never answers at all: the ring timeout ends the call no_answer', async () => {
    // A UDP socket that takes the INVITE (and its retransmissions) and says nothing.
    const silent = createSocket('udp4');
    let received = 0;
    silent.on('message', () => received++);
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    try {
      await sipSideWithTrunk(silent.address().port);
      const ended = await placedCallEnd('+4791230006');
      assert.equal(ended.end_reason, 'no_answer', JSON.stringify(ended));
      assert.ok(received >= 1, 'the INVITE reached the trunk');
    } finally {
      silent.close();
    }
  });

  test('a dial is once per call id: a retried dial request does not ring again; the control API opens to its own token only', async () => {
    // The trunk: a UDP socket that notes each INVITE's Call-ID (a retransmission keeps its own).
    const trunk = createSocket('udp4');
    const invites = new Set<string>();
    trunk.on('message', (message) => {
      const text = message.toString();
      if (text.startsWith('INVITE ')) invites.add(/^Call-ID:\s*(.+)$/im.exec(text)?.[1].trim() ?? '');
    });
    await new Promise<void>((resolve) => trunk.bind(0, '127.0.0.1', resolve));
    try {
      await sipSideWithTrunk(trunk.address().port);
      const callId = crypto.randomUUID();
      const dial = () =>
        fetch(`${controlUrl}/calls/${callId}/dial`, {
          method: 'POST',
          headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            to: '+4791230008',
            from: '',
            ringTimeoutSeconds: 10,
            gateway: gateway.controlUrl,
            streamsUrl: gateway.streamsUrl,
            streamToken: streamTokenFor(stack.settings.media.controlToken!, callId, 10),
          }),
        }).then((response) => response.json() as Promise<{ dialing: boolean }>);
      assert.deepEqual((await Promise.all([dial(), dial(), dial()])).map((answer) => answer.dialing).sort(), [
        false,
        false,
        true,
      ]);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal((await dial()).dialing, false);
      assert.equal(invites.size, 1, [...invites].join(', '));
      // One secret, one door: neither a wrong token nor the gateway's tokens open the control API.
      for (const token of ['nope', TOKEN, stack.settings.media.controlToken!]) {
        const refused = await fetch(`${controlUrl}/calls/${callId}/release`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(refused.status, 401, token);
      }
    } finally {
      trunk.close();
    }
  });

  test('without SIP_TRUNK_URI nothing is dialled: the call fails not_connected at once', async () => {
    await sipSideWithTrunk(9, { SIP_TRUNK_URI: '' });
    const ended = await placedCallEnd('+4791230007');
    assert.equal(ended.end_reason, 'not_connected', JSON.stringify(ended));
  });

  test('malformed messages and unknown methods are answered or dropped, and the SIP side goes on', async () => {
    await sipSideWithTrunk(9);
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const answers: string[] = [];
    socket.on('message', (message) => answers.push(message.toString()));
    const { port } = socket.address();
    const request = (method: string) =>
      [
        `${method} sip:+4722000000@127.0.0.1:${sipPort} SIP/2.0`,
        `Via: SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bK-${method}-${Date.now()}`,
        'From: <sip:tester@127.0.0.1>;tag=1',
        `To: <sip:+4722000000@127.0.0.1:${sipPort}>`,
        `Call-ID: ${method}-${Date.now()}@127.0.0.1`,
        `CSeq: 1 ${method}`,
        'Max-Forwards: 70',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n');
    try {
      for (const datagram of [
        '\u0000\u0001garbage',
        'INVITE nothing\r\n\r\n',
        request('FROBNICATE'),
        request('OPTIONS'),
      ]) {
        socket.send(datagram, sipPort, '127.0.0.1');
      }
      for (let i = 0; i < 50 && answers.length < 2; i++)
        await new Promise((resolve) => setTimeout(resolve, 100));
      assert.ok(
        answers.some((answer) => answer.startsWith('SIP/2.0 405')),
        answers.join('\n'),
      );
      assert.ok(
        answers.some((answer) => answer.startsWith('SIP/2.0 200')),
        answers.join('\n'),
      );
      assert.equal(
        ((await (await fetch(`${controlUrl}/healthz`)).json()) as { status: string }).status,
        'ok',
      );
    } finally {
      socket.close();
    }
  });

  test('an INVITE for a number of no workspace, or whose agent is not published, is refused 480; no Call', async () => {
    const draft = await createAgentFixture(stack.db.orm, { workspaceId: owner.workspaceId, status: 'draft' });
    const far = await farEnd('unknown', { play: await personWav('silence', null, 0, 5), answer: 'auto' });
    await sipSideWithTrunk(far.port);
    for (const number of ['+4799999999', draft.number, 'alice']) {
      far.events.length = 0;
      await far.command('dial', `sip:${number}@127.0.0.1:${sipPort}`);
      const closed = await far.waitForEvent('CALL_CLOSED', 15_000);
      assert.match(String(closed.param), /480/, JSON.stringify(closed));
    }
    const calls = await stack.db.orm.em.fork().find(Call, { toNumber: ['+4799999999', draft.number] });
    assert.deepEqual(calls, []);
  });

  describe('who may reach it (SIP_TRUSTED_SOURCES, SIP_INVITES_PER_SECOND)', () => {
    const refusedCount = async (reason: string) => {
      const text = await (await fetch(`${controlUrl}/metrics`)).text();
      return Number(
        new RegExp(`^sip_requests_refused_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text)?.[1],
      );
    };

    test('an INVITE from a source outside the trusted ones is answered 403: no Call, counted', async () => {
      const number = (await createAgentFixture(stack.db.orm, { workspaceId: owner.workspaceId })).number;
      // The trunk is 127.0.0.1; the stranger another loopback address, so another source.
      await sipSideWithTrunk(9, { SIP_TRUSTED_SOURCES: '127.0.0.1' });
      const stranger = await runSippInvites(work, {
        port: sipPort,
        user: number,
        localIp: '127.0.0.2',
        calls: 1,
      });
      assert.deepEqual(stranger.statuses, [403], stranger.output);
      assert.equal(stranger.code, 0, stranger.output);
      assert.equal(await stack.db.orm.em.fork().count(Call, { toNumber: number }), 0);
      assert.equal(await refusedCount('untrusted_source'), 1);
      assert.match(
        sipSide?.output() ?? '',
        /"msg":"SIP request refused"[^\n]*"reason":"untrusted_source"[^\n]*"source":"127\.0\.0\.2:/,
      );
    });

    test('a flood of INVITEs from one source: those over its rate are answered 503 with Retry-After and cost no Call', async () => {
      const number = (await createAgentFixture(stack.db.orm, { workspaceId: owner.workspaceId })).number;
      await sipSideWithTrunk(9, { SIP_INVITES_PER_SECOND: '1' });
      const flood = await runSippInvites(work, {
        port: sipPort,
        user: number,
        localIp: '127.0.0.1',
        calls: 4,
      });
      assert.deepEqual(
        [...flood.statuses].sort(),
        [200, 503, 503, 503],
        `one served, three refused:\n${flood.output}`,
      );
      assert.match(flood.trace, /^SIP\/2\.0 503[\s\S]*?^Retry-After: 1\r?$/m);
      assert.equal(await refusedCount('rate_limited'), 3);
      const calls = await stack.db.orm.em.fork().find(Call, { toNumber: number });
      assert.equal(calls.length, 1, 'the one served is the only Call');
      await waitForCallEnd(stack.api.client(owner.secret), calls[0].id, 30_000);
    });
  });

  test('a far end whose audio stops mid-call (no BYE) ends the call as a caller hang-up', async () => {
    const { far, api, callId } = await answeredOutboundCall('vanishes', '+4791230004');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await far.kill();
    // SIP_RTP_TIMEOUT_MS is 4 s here.
    const ended = await waitForCallEnd(api, callId, 30_000);
    assert.equal(ended.status, 'completed');
    assert.equal(ended.end_reason, 'caller_hangup');
  });
});
