import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type WebSocket, WebSocketServer } from 'ws';
import { SpeakingFarEnds } from '../activities/speaking-far-end.js';
import { decodeMulaw, encodeMulaw } from '../lib/audio/mulaw.js';
import { createLogger } from '../lib/logger.js';
import { mediaStreamsUrl } from '../lib/media/media-control.js';
import type { TextToSpeech } from '../lib/speech/speech-ports.js';

// The speaking simulator's person (activities/speaking-far-end.ts) against a gateway played by
// this test over a real WebSocket: a line the agent does not answer is said again (at most twice),
// as a person on a phone would; a line the agent answers is not. Without this a line lost in a
// loaded gateway left both sides waiting for the ten-minute silence timeout.

const UNANSWERED_AFTER_MS = 600;
const LINE_SECONDS = 0.2;

/** A TTS that says every line as LINE_SECONDS of a loud tone (16 kHz). */
const tone: TextToSpeech = {
  async synthesize() {
    const samples = new Int16Array(16_000 * LINE_SECONDS);
    for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin(i / 5));
    return { samples, sampleRate: 16_000 };
  },
  async voices() {
    return [];
  },
};

/** The gateway's side: attaches every stream, counts the person's lines (bursts of media), answers when told. */
interface GatewayStandIn {
  url: string;
  /** Lines heard per call: runs of loud media frames with ≥ 150 ms between them. */
  linesHeard(callId: string): number;
  /** Plays 200 ms of agent audio on the call's stream. */
  agentSpeaks(callId: string): void;
  close(): Promise<void>;
}

async function startGatewayStandIn(): Promise<GatewayStandIn> {
  const server = createServer();
  const wss = new WebSocketServer({ server });
  const calls = new Map<
    string,
    { socket: WebSocket; lines: number; lastFrameAt: number; streamSid: string }
  >();
  wss.on('connection', (socket) => {
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString());
      if (message.event === 'start') {
        const callId = message.start.customParameters.callId;
        calls.set(callId, { socket, lines: 0, lastFrameAt: 0, streamSid: message.streamSid });
        socket.send(
          JSON.stringify({ event: 'mark', streamSid: message.streamSid, mark: { name: 'attached' } }),
        );
      } else if (message.event === 'media') {
        // The stream carries silence between lines, as a phone line does: only loud frames count.
        const samples = decodeMulaw(Buffer.from(message.media.payload, 'base64'));
        if (!samples.some((sample) => Math.abs(sample) > 2000)) return;
        const call = [...calls.values()].find((c) => c.socket === socket)!;
        const now = performance.now();
        if (now - call.lastFrameAt >= 150) call.lines++;
        call.lastFrameAt = now;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    linesHeard: (callId) => calls.get(callId)?.lines ?? 0,
    agentSpeaks(callId) {
      const call = calls.get(callId)!;
      const payload = Buffer.from(encodeMulaw(new Int16Array(160).fill(4000))).toString('base64');
      for (let i = 0; i < 10; i++) {
        call.socket.send(JSON.stringify({ event: 'media', streamSid: call.streamSid, media: { payload } }));
      }
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise((resolve) => wss.close(resolve));
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let gateway: GatewayStandIn;
let farEnds: SpeakingFarEnds;

before(async () => {
  gateway = await startGatewayStandIn();
  farEnds = new SpeakingFarEnds({
    tts: tone,
    logger: createLogger('error'),
    unansweredAfterMs: UNANSWERED_AFTER_MS,
  });
});

after(async () => {
  await gateway?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a simulated person on a speaking call', () => {
  test('says an unanswered line again, at most twice, then waits', async () => {
    const audio = {
      streamsUrl: mediaStreamsUrl(gateway.url),
      token: 'cst1.0.x',
      callId: crypto.randomUUID(),
    };
    assert.equal(await farEnds.answer(audio), true);
    assert.equal(farEnds.say(audio, 'Hello, is anyone there?'), true);
    // Said once, then twice more after UNANSWERED_AFTER_MS each; never a fourth time.
    await sleep(LINE_SECONDS * 1000 * 3 + UNANSWERED_AFTER_MS * 4 + 500);
    assert.equal(gateway.linesHeard(audio.callId), 3);
    farEnds.hangUp(audio);
  });

  test('does not repeat a line the agent answered', async () => {
    const audio = {
      streamsUrl: mediaStreamsUrl(gateway.url),
      token: 'cst1.0.x',
      callId: crypto.randomUUID(),
    };
    assert.equal(await farEnds.answer(audio), true);
    farEnds.say(audio, 'I would like to book an appointment.');
    // The agent answers once the line is over.
    while (gateway.linesHeard(audio.callId) === 0) await sleep(20);
    await sleep(LINE_SECONDS * 1000 + 100);
    gateway.agentSpeaks(audio.callId);
    await sleep(UNANSWERED_AFTER_MS * 3);
    assert.equal(gateway.linesHeard(audio.callId), 1);
    farEnds.hangUp(audio);
  });

  test('a newer line replaces the unanswered one: only the newer is said again', async () => {
    const audio = {
      streamsUrl: mediaStreamsUrl(gateway.url),
      token: 'cst1.0.x',
      callId: crypto.randomUUID(),
    };
    assert.equal(await farEnds.answer(audio), true);
    farEnds.say(audio, 'First line.');
    await sleep(LINE_SECONDS * 1000 + 300);
    farEnds.say(audio, 'Second line.');
    // Two lines, then the second twice more: four in all (the first is never repeated).
    await sleep(LINE_SECONDS * 1000 * 5 + UNANSWERED_AFTER_MS * 4 + 800);
    assert.equal(gateway.linesHeard(audio.callId), 4);
    farEnds.hangUp(audio);
  });
});
