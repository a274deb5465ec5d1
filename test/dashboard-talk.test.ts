import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import wavefile from 'wavefile';
import { WebSocket } from 'ws';
import { recordingPath } from '../lib/recordings/recording-files.js';
import { loadSettings } from '../lib/settings.js';
import { freePort } from '../scripts/processes.js';
import { createFixture, type Fixture, startApi } from './support/api.js';
import { chromiumPath, screenshot } from './support/browser.js';
import { type AgentFixture, createAgentFixture } from './support/call-fixtures.js';
import { type CallStack, startCallStack, waitForCallEnd } from './support/call-stack.js';
import { DashboardClient, signedInClient, TEST_PASSWORD } from './support/dashboard-session.js';
import { startTestMediaGateway, type TestMediaGateway, testMediaSettings } from './support/media-gateway.js';
import { startTestSpeech, type TestSpeech } from './support/speech-kit.js';
import { until } from './support/wait-for.js';

// The test panel's Talk (spec voice-media-v1 section 7) end to end: headless Chromium with a fake
// microphone fed from a WAV of Piper's voice, the API relaying the page's Media Streams socket to
// a real media gateway, the local speech server, PostgreSQL, Temporal and the workers. The
// caller's words show in the page's transcript; closing the page ends the call `caller_hangup`,
// recorded. The socket is checked like the dashboard's API: no session, a viewer's session, or a
// page of another origin is refused.

const executablePath = chromiumPath();
const skip = executablePath
  ? false
  : 'no Chromium on this machine (apt-get install -y chromium, or set CHROMIUM_PATH): browser tests skipped';
if (skip) console.log(`# ${skip}`);

const TOKEN = 'dashboard-talk-token-41c9';
/** What the person says into the microphone; the transcript must hold its keywords. */
const CALLER_LINE = 'I would like to book a table for two on Friday evening.';

let stack: CallStack;
let gateway: TestMediaGateway;
let speech: TestSpeech;
let browser: Browser;
let owner: Fixture;
let agent: AgentFixture;
let ownerSession: DashboardClient;
let viewerSession: DashboardClient;
let workDir: string;

before(
  async () => {
    if (skip) return;
    workDir = await mkdtemp(path.join(tmpdir(), 'dashboard-talk-'));
    speech = await startTestSpeech();
    const [port, controlPort] = [await freePort(), await freePort()];
    const defaults = loadSettings({});
    const endpoint = (model: string) => ({ url: speech.url, apiKey: undefined, model, timeoutMs: 15_000 });
    stack = await startCallStack({
      prefix: 'dashboard-talk',
      settings: {
        media: testMediaSettings(defaults.media, { streamsToken: TOKEN, port, controlPort }),
        speech: { local: false, stt: endpoint('whisper-1'), tts: endpoint('tts-1') },
        recordingsDir: workDir,
      },
    });
    gateway = await startTestMediaGateway(stack, speech, undefined, { port, controlPort });
    owner = await createFixture(stack.db.orm, { requestsPerSecond: 10_000 });
    const viewer = await createFixture(stack.db.orm, { workspaceId: owner.workspaceId, role: 'viewer' });
    agent = await createAgentFixture(stack.db.orm, {
      workspaceId: owner.workspaceId,
      // Long enough that the person's line (6 s into the microphone) starts while it plays: a barge-in.
      firstMessage:
        'Hello, this is Ada at the booking desk of the harbour restaurant. I can help you with a table, ' +
        'our opening hours, the menu of the week, and anything else you would like to know before your visit.',
    });
    ownerSession = await signedInClient(stack.api.url, stack.db.orm, owner.userId);
    viewerSession = await signedInClient(stack.api.url, stack.db.orm, viewer.userId);

    // The microphone's sound: a pause, the line in Piper's voice, then a long silence (the fake
    // device loops its file; the line is said again only after the test is done with the call).
    const line = await speech.tts.synthesize(CALLER_LINE, { voice: 'joe' });
    const before = Math.round(6 * line.sampleRate);
    const samples = new Int16Array(before + line.samples.length + 90 * line.sampleRate);
    samples.set(line.samples, before);
    const wav = new wavefile.WaveFile();
    wav.fromScratch(1, line.sampleRate, '16', samples);
    const microphoneFile = path.join(workDir, 'caller.wav');
    await writeFile(microphoneFile, wav.toBuffer());
    browser = await chromium.launch({
      executablePath: executablePath!,
      args: [
        '--no-sandbox',
        '--use-fake-ui-for-media-stream',
        '--use-fake-device-for-media-stream',
        `--use-file-for-fake-audio-capture=${microphoneFile}`,
        '--autoplay-policy=no-user-gesture-required',
      ],
    });
  },
  { timeout: 15 * 60_000 },
);

after(async () => {
  await browser?.close();
  await gateway?.close();
  await stack?.close();
  await speech?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** A page of the dashboard signed in as `session`'s person. */
async function signedInPage(session: DashboardClient, url = stack.api.url): Promise<Page> {
  const context = await browser.newContext();
  const [name, value] = session.cookie!.split('=') as [string, string];
  await context.addCookies([{ name, value, url }]);
  const page = await context.newPage();
  page.on('pageerror', (error) => console.log(`# page error: ${error.message}`));
  return page;
}

/** A Media Streams message as far as the test reads it. */
type Frame = { at: number; event: string; media?: { payload: string }; mark?: { name: string } };

/** Every Media Streams message of the page's talk socket, each way, with when it passed. */
function watchTalkSocket(page: Page): { sent: Frame[]; received: Frame[] } {
  const frames = { sent: [] as Frame[], received: [] as Frame[] };
  page.on('websocket', (socket) => {
    if (!socket.url().endsWith('/talk')) return;
    const keep = (list: Frame[]) => (frame: { payload: string | Buffer }) =>
      list.push({ at: Date.now(), ...JSON.parse(frame.payload.toString()) });
    socket.on('framesent', keep(frames.sent));
    socket.on('framereceived', keep(frames.received));
  });
  return frames;
}

/** A Media Streams `start` as a page sends it, with the custom parameters given. */
const startMessage = (customParameters: Record<string, string> = {}) => ({
  event: 'start',
  streamSid: 'MZtest',
  start: {
    streamSid: 'MZtest',
    customParameters,
    mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
  },
});

const talkUrl = (callId: string) =>
  `${stack.api.url.replace('http:', 'ws:')}/dashboard/api/test-calls/${callId}/talk`;

/** The talk socket's handshake: the HTTP status it was refused with, or 101 when it opened. */
function handshake(callId: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(talkUrl(callId), { headers });
    socket.on('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.on('open', () => {
      resolve(101);
      socket.close();
    });
    socket.on('error', (error) => reject(error));
  });
}

const SPOKEN_CALL = { timeout: 300_000 };

describe('Talk in the test panel', { skip }, () => {
  test(
    "the caller's words reach the transcript; a closed page hangs up; the call is recorded",
    SPOKEN_CALL,
    async () => {
      const page = await signedInPage(ownerSession);
      const frames = watchTalkSocket(page);
      await page.goto(`${stack.api.url}/agents/${agent.agentId}`);
      // Offered once the page knows speech is configured (GET /dashboard/api/talk).
      const talk = page.locator('button:not([disabled])', { hasText: /^Talk$/ });
      await talk.waitFor({ timeout: 15_000 });
      await talk.click();
      await page.getByText('Talking: your microphone is on').waitFor({ timeout: 30_000 });
      // The agent's greeting and then the person's line, heard by the gateway, show as they are written.
      await page.locator('.says-agent').first().waitFor({ timeout: 60_000 });
      const callerLine = page.locator('.says-caller').first();
      await callerLine.waitFor({ timeout: 120_000 });
      const heard = (await callerLine.textContent())!.toLowerCase();
      assert.match(heard, /table|friday|book/, heard);
      await screenshot(page, 'talk-test-panel');

      const calls = await stack.api.client(owner.secret).get('/calls?limit=1');
      const callId = calls.body.data[0].id as string;
      const live = await stack.api.client(owner.secret).get(`/calls/${callId}`);
      assert.equal(live.body.channel, 'web');
      assert.equal(live.body.status, 'in_progress');

      // The page spoke Media Streams as Twilio's client does: 20 ms μ-law frames up; the agent's audio
      // down and played, its marks echoed once played; a barge-in's `clear` honoured at once,
      // echoing the marks of the audio it dropped (as Twilio does).
      const sent = frames.sent.filter((f) => f.event === 'media');
      assert.ok(sent.length > 100, `${sent.length} frames of the microphone`);
      assert.ok(
        sent.every((f) => Buffer.from(f.media!.payload, 'base64').length === 160),
        'each frame is 160 bytes',
      );
      assert.deepEqual(
        frames.sent.slice(0, 2).map((f) => f.event),
        ['connected', 'start'],
      );
      // The greeting (cut short by the person, sooner when its synthesis was slow) and the answer,
      // which may still be on its way when the person's line shows.
      const agentAudio = () => frames.received.filter((f) => f.event === 'media').length;
      await until(
        () => agentAudio() > 50,
        () => `${agentAudio()} frames of the agent's audio`,
        {
          limitMs: 60_000,
        },
      );
      const clear = frames.received.find((f) => f.event === 'clear');
      assert.ok(clear, 'the person spoke over the greeting: the gateway sent clear');
      // The agent's answer plays to the end of a sentence, whose mark then comes back.
      const echoed = () => frames.sent.filter((f) => f.event === 'mark');
      await until(() => echoed().length > 0, 'a mark was echoed', { limitMs: 60_000 });
      for (const echo of echoed()) {
        const mark = frames.received.find((f) => f.event === 'mark' && f.mark?.name === echo.mark?.name);
        assert.ok(mark && mark.at <= echo.at, `mark ${echo.mark?.name} echoed after it came`);
      }

      // A closed tab is the caller hanging up.
      await page.context().close();
      const ended = await waitForCallEnd(stack.api.client(owner.secret), callId, 120_000);
      assert.equal(ended.status, 'completed', JSON.stringify(ended));
      assert.equal(ended.end_reason, 'caller_hangup');
      assert.equal(ended.direction, 'inbound');
      assert.equal(ended.has_recording, true);
      assert.ok((await stat(recordingPath(workDir, callId))).size > 44 + 8000 * 4, 'seconds of audio');

      const transcript = await stack.api.client(owner.secret).get(`/calls/${callId}/transcript`);
      const said = (transcript.body.data as { role: string; text: string }[])
        .filter((line) => line.role === 'caller')
        .map((line) => line.text.toLowerCase())
        .join(' | ');
      assert.match(said, /table|friday|book/, said);
    },
  );

  test('a viewer is offered no Talk, can neither start one nor open a socket; a page cannot pick the call in its start', async () => {
    const page = await signedInPage(viewerSession);
    await page.goto(`${stack.api.url}/agents/${agent.agentId}`);
    await page.getByText('Viewers cannot place test calls.').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Talk', exact: true }).count(), 0);
    await page.context().close();

    await viewerSession.refresh();
    const refused = await viewerSession.post('/dashboard/api/test-calls', {
      agent_id: agent.agentId,
      talk: true,
    });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error.code, 'role_required');

    // The owner's talk call, which the viewer's session may not open a socket on.
    await ownerSession.refresh();
    const started = await ownerSession.post('/dashboard/api/test-calls', {
      agent_id: agent.agentId,
      talk: true,
    });
    assert.equal(started.status, 201, started.text);
    const callId = started.body.call_id as string;
    const origin = stack.api.url;
    assert.equal(await handshake(callId, { cookie: viewerSession.cookie!, origin }), 403);
    assert.equal(await handshake(callId, { origin }), 401, 'no session');
    assert.equal(
      await handshake(callId, { cookie: ownerSession.cookie!, origin: 'http://elsewhere.example' }),
      403,
      'another origin',
    );
    // The call's own person opens it. What the page puts in `start` is replaced by the API: a
    // page that names another call and a token of its own still streams to its call only.
    const other = await ownerSession.post('/dashboard/api/test-calls', { agent_id: agent.agentId });
    const socket = new WebSocket(talkUrl(callId), { headers: { cookie: ownerSession.cookie!, origin } });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const attached = new Promise<void>((resolve) =>
      socket.on('message', (data) => {
        if (JSON.parse(data.toString()).mark?.name === 'attached') resolve();
      }),
    );
    socket.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
    socket.send(JSON.stringify(startMessage({ token: 'guessed', callId: other.body.call_id })));
    await attached;
    assert.ok(gateway.context.sessions.get(callId), 'the stream is the talk call’s');
    assert.equal(gateway.context.sessions.get(other.body.call_id), undefined);
    // `stop` is hanging up.
    socket.send(JSON.stringify({ event: 'stop', streamSid: 'MZtest' }));
    const ended = await waitForCallEnd(stack.api.client(owner.secret), callId, 60_000);
    assert.equal(ended.end_reason, 'caller_hangup', JSON.stringify(ended));
    socket.close();
    await ownerSession.post(`/dashboard/api/test-calls/${other.body.call_id}/hang-up`);
  });

  test('a talk call whose page went before opening its socket ends caller_hangup within seconds', async () => {
    await ownerSession.refresh();
    const started = await ownerSession.post('/dashboard/api/test-calls', {
      agent_id: agent.agentId,
      talk: true,
    });
    assert.equal(started.status, 201, started.text);
    // No socket ever comes: the gateway, asked to answer, finds no stream and hangs the call up.
    const ended = await waitForCallEnd(stack.api.client(owner.secret), started.body.call_id, 60_000);
    assert.equal(ended.end_reason, 'caller_hangup', JSON.stringify(ended));

    // A page whose socket was refused asks the API to hang up (the hang-up request of a typed call).
    const refused = await ownerSession.post('/dashboard/api/test-calls', {
      agent_id: agent.agentId,
      talk: true,
    });
    const hungUp = await ownerSession.post(`/dashboard/api/test-calls/${refused.body.call_id}/hang-up`);
    assert.equal(hungUp.status, 202, hungUp.text);
    const over = await waitForCallEnd(stack.api.client(owner.secret), refused.body.call_id, 60_000);
    assert.equal(over.end_reason, 'caller_hangup', JSON.stringify(over));
  });

  test('the socket lives as long as its session: signing out closes it (1008) and hangs up', async () => {
    await ownerSession.refresh();
    const email = (await ownerSession.get('/dashboard/auth/session')).body.email as string;
    const second = new DashboardClient(stack.api.url);
    const signedIn = await second.post('/dashboard/auth/sign-in', { email, password: TEST_PASSWORD });
    assert.equal(signedIn.status, 200, signedIn.text);
    await second.refresh();
    const started = await second.post('/dashboard/api/test-calls', { agent_id: agent.agentId, talk: true });
    assert.equal(started.status, 201, started.text);
    const callId = started.body.call_id as string;
    const socket = new WebSocket(talkUrl(callId), {
      headers: { cookie: second.cookie!, origin: stack.api.url },
    });
    const closed = new Promise<number>((resolve) => socket.once('close', resolve));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify(startMessage()));
    assert.equal((await second.post('/dashboard/auth/sign-out')).status, 200);
    assert.equal(await closed, 1008);
    const ended = await waitForCallEnd(stack.api.client(owner.secret), callId, 60_000);
    assert.equal(ended.end_reason, 'caller_hangup', JSON.stringify(ended));
  });

  test('without a media gateway Talk is unavailable: disabled in the page, with the reason', async () => {
    const textOnly = await startApi({
      orm: stack.db.orm,
      settings: {
        media: {
          ...loadSettings({}).media,
          gatewayUrl: undefined,
          streamsToken: undefined,
          controlToken: undefined,
        },
      },
    });
    try {
      const session = await signedInClient(textOnly.url, stack.db.orm, owner.userId);
      const talk = await session.get('/dashboard/api/talk');
      assert.equal(talk.status, 200, talk.text);
      assert.equal(talk.body.available, false);
      assert.match(talk.body.reason, /VOICE_SPEECH=local/);
      const refused = await session.post('/dashboard/api/test-calls', {
        agent_id: agent.agentId,
        talk: true,
      });
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.body.error.code, 'talk_unavailable');
      // The page offers typing, and Talk disabled with the reason.
      const page = await signedInPage(session, textOnly.url);
      await page.goto(`${textOnly.url}/agents/${agent.agentId}`);
      await page.getByText('Talking needs speech').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Talk', exact: true }).isDisabled(), true);
      assert.equal(await page.getByRole('button', { name: 'Start a test call' }).isEnabled(), true);
      await screenshot(page, 'talk-unavailable');
      await page.context().close();
    } finally {
      await textOnly.close();
    }
  });
});
