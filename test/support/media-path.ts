import { after, before } from 'node:test';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import { toMulawFrames } from '../../lib/audio/phone-frames.js';
import { TurnDetector } from '../../lib/audio/turn-detector.js';
import type { VoiceActivity } from '../../lib/audio/voice-activity.js';
import type { TranscriptLine } from '../../lib/calls/transcript.js';
import { createLogger } from '../../lib/logger.js';
import type { Pcm, SpeechToText, SpeechVoice, TextToSpeech } from '../../lib/speech/speech-ports.js';
import type { AgentTurn, RespondOptions, VoiceRuntime } from '../../lib/voice-runtime/voice-runtime.js';
import { AgentVoice } from '../../media/agent-voice.js';
import { CallAudio } from '../../media/call-audio.js';
import type { CallRecording } from '../../media/call-recording.js';
import type { ClientJoin } from '../../media/client-join.js';
import { createAgentFixture, createQueuedCall } from './call-fixtures.js';
import { freshDatabase, type TestDatabase } from './database.js';

// One call's media path (media/call-audio.ts with its turn detector, agent voice and turn loop) on
// fakes at its ports, for fast tests of the path's rules without the speech models, Temporal or a
// socket:
// - the caller's audio is made of "phrases": each phrase is a tone whose level codes which phrase
//   it is, so the fake speech-to-text hears exactly the phrases a piece of audio holds, in order;
// - voice activity is the audio's level (speech above a floor), not a model;
// - the speech-to-text answers after a latency the test sets, or only when the test lets it
//   (`stt.hold()`), so a test puts the transcription before or after the turn's end on purpose;
// - the voice runtime answers as the test scripts it, sentence by sentence, and records each request;
// - the call workflow is a recorder of the signals it is sent;
// - the turn loop writes its lines to a real PostgreSQL (the test file's database).
// Frames go in as fast as the test gives them: the detector counts time in audio, not on the wall
// clock, so a turn's end is where the test puts the silence.

/** Level step between two phrases' tones (μ-law keeps it apart); phrase k is at (k + 2) steps. */
const PHRASE_LEVEL_STEP = 1000;
const MAX_PHRASES = 28;
/** A window above this level (-1..1 RMS) is speech for the fake voice activity. */
const SPEECH_RMS = 0.02;

/** Voice activity by level: speech while the window is louder than a whisper. */
export const levelVoiceActivity: VoiceActivity = {
  async probability(window) {
    let sum = 0;
    for (const sample of window) sum += sample * sample;
    return Math.sqrt(sum / window.length) > SPEECH_RMS ? 0.95 : 0.02;
  },
};

/** The caller's phrases: each one's audio is a tone at its own level. */
export class Phrases {
  private readonly texts: string[] = [];

  /** `ms` of the caller saying `text` (8 kHz PCM). */
  audio(text: string, ms: number): Int16Array {
    let code = this.texts.indexOf(text);
    if (code < 0) {
      if (this.texts.length === MAX_PHRASES) throw new Error('too many phrases for one call');
      code = this.texts.push(text) - 1;
    }
    const level = (code + 2) * PHRASE_LEVEL_STEP;
    const samples = new Int16Array((ms * 8000) / 1000);
    // A square wave of period 32 samples (250 Hz, below every beep the answering-machine screen
    // listens for): never silent, always at the phrase's level.
    for (let i = 0; i < samples.length; i++) samples[i] = i % 32 < 16 ? level : -level;
    return samples;
  }

  /** The phrases `samples` hold, in the order they are heard, joined by a space. */
  heard(samples: Int16Array): string {
    const codes: number[] = [];
    for (const sample of samples) {
      if (Math.abs(sample) < PHRASE_LEVEL_STEP) continue;
      const code = Math.round(Math.abs(sample) / PHRASE_LEVEL_STEP) - 2;
      if (codes.at(-1) !== code) codes.push(code);
    }
    return codes.map((code) => this.texts[code] ?? '').join(' ');
  }
}

/** Speech-to-text over the phrases: answers after `latencyMs`, or when a hold is released. */
export class FakeSpeechToText implements SpeechToText {
  latencyMs = 0;
  /** Every request, with what it will answer, whether it is answered yet, and whether its caller aborted it. */
  readonly requests: { text: string; seconds: number; answered: boolean; aborted: boolean }[] = [];
  private held: Promise<void> | null = null;
  private release: (() => void) | null = null;

  constructor(private readonly phrases: Phrases) {}

  /** Transcriptions asked from now on wait until the returned function is called. */
  hold(): () => void {
    this.held = new Promise((resolve) => {
      this.release = resolve;
    });
    return () => {
      this.release?.();
      this.held = null;
    };
  }

  /** Like an HTTP request: an abort rejects it with the signal's reason, at once. */
  async transcribe(audio: Pcm, options: { signal?: AbortSignal } = {}): Promise<string> {
    const request = {
      text: this.phrases.heard(audio.samples),
      seconds: audio.samples.length / audio.sampleRate,
      answered: false,
      aborted: false,
    };
    this.requests.push(request);
    const held = this.held;
    const { signal } = options;
    const aborted = new Promise<never>((_, reject) => {
      const abort = () => {
        request.aborted = true;
        reject(signal?.reason);
      };
      if (signal?.aborted) abort();
      signal?.addEventListener('abort', abort, { once: true });
    });
    aborted.catch(() => {});
    const answer = (async () => {
      if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
      if (held) await held;
    })();
    await Promise.race([answer, aborted]);
    request.answered = true;
    return request.text;
  }
}

/** Text-to-speech whose audio is 40 ms of tone per word, made at once. */
export class FakeTextToSpeech implements TextToSpeech {
  readonly spoken: string[] = [];
  async synthesize(text: string): Promise<Pcm> {
    this.spoken.push(text);
    const words = Math.max(1, text.split(/\s+/).length);
    const samples = new Int16Array(words * 320);
    for (let i = 0; i < samples.length; i++) samples[i] = i % 16 < 8 ? 3000 : -3000;
    return { sampleRate: 8000, samples };
  }
  async voices(): Promise<SpeechVoice[]> {
    return [];
  }
}

/** A request the scripted runtime was given: its transcript as `role: text`, and whether it was aborted. */
export interface RuntimeRequest {
  lines: string[];
  aborted: boolean;
  /** The caller's turns that had ended when it was asked (0 for the first turn: asked ahead, at the pause). */
  turnsEnded: number;
}

/** The agent's model: answers each request with `answer(lastLine)`, its sentences one by one. */
export class ScriptedRuntime implements VoiceRuntime {
  readonly requests: RuntimeRequest[] = [];
  /** Set by the harness: the caller's turns ended so far. */
  turnsEnded: () => number = () => 0;
  /** Answers wait for this (a slow model), when set (`holdAnswers`). */
  private gate: Promise<void> | null = null;
  constructor(
    public answer: (heard: string) => AgentTurn = () => ({ say: 'Okay.', next: { kind: 'continue' } }),
  ) {}

  /** Answers asked from now on come only when the returned function is called. */
  holdAnswers(): () => void {
    let release = () => {};
    this.gate = new Promise((resolve) => {
      release = resolve;
    });
    return () => {
      release();
      this.gate = null;
    };
  }

  async openingLine(): Promise<string | null> {
    return null;
  }

  async respond(
    _context: unknown,
    transcript: TranscriptLine[],
    options: RespondOptions = {},
  ): Promise<AgentTurn> {
    const request: RuntimeRequest = {
      lines: transcript.map((l) => `${l.role}: ${l.text}`),
      aborted: false,
      turnsEnded: this.turnsEnded(),
    };
    this.requests.push(request);
    options.signal?.addEventListener('abort', () => (request.aborted = true), { once: true });
    const turn = this.answer(transcript.at(-1)?.text ?? '');
    // Asynchronous like a model: the sentences come after the request was made.
    await new Promise((resolve) => setImmediate(resolve));
    await this.gate;
    for (const sentence of turn.say.match(/[^.!?]+[.!?]/g) ?? []) options.onSentence?.(sentence.trim());
    return { ...turn, timing: { firstTokenMs: 1, answerMs: 2 } };
  }
}

export interface MediaPathCall {
  audio: CallAudio;
  callId: string;
  phrases: Phrases;
  stt: FakeSpeechToText;
  tts: FakeTextToSpeech;
  runtime: ScriptedRuntime;
  /** The signals the call workflow was sent, in order. */
  signals: { name: string; args: unknown[] }[];
  /** What went to the caller: audio frames, marks, clears, transfer targets. */
  out: { frames: number; marks: string[]; clears: number; transfers: string[] };
  /** The turn detector's events so far, by type (`speech_paused`, `turn_ended`, ...). */
  turnEvents: string[];
  /** The socket was closed with this. */
  closed: { code: number; reason: string } | null;
  /** When the call's audio began (epoch ms): its audio clock's zero. */
  startedAt: number;
  /** Where the recording's agent channel was cut (an interruption's time on the call's clock), in order. */
  recordingCuts: number[];
  /** `ms` of the caller saying `text`, heard frame by frame. */
  says(text: string, ms: number): void;
  /** `ms` of the caller's silence. */
  silence(ms: number): void;
  /** The call workflow hands the turns to the gateway. */
  takeTurns(): Promise<unknown>;
  end(): Promise<void>;
}

/** A call's media path on the fakes; `close` the harness's calls with `end()`. */
export async function startMediaPathCall(
  db: TestDatabase,
  options: {
    endpointingMs?: number;
    preemptiveGeneration?: boolean;
    runtime?: ScriptedRuntime;
    /** Temporal is down until this resolves: every signal waits for it. */
    temporalBack?: Promise<void>;
    /** The client reports a transfer's outcome (the SIP side's `transfer: report`). */
    reportsTransfers?: boolean;
    /** The call detects answering machines on a carrier that cannot tell (media/pick-up-screen.ts). */
    screensPickUp?: boolean;
    /** The client joins a transfer's legs itself (the SIP side's `join`, media/client-join.ts). */
    clientJoin?: ClientJoin;
  } = {},
): Promise<MediaPathCall> {
  const fixture = await createAgentFixture(db.orm, {});
  const row = await createQueuedCall(db.orm, fixture, { to: '+4790001234' });
  const phrases = new Phrases();
  const stt = new FakeSpeechToText(phrases);
  const tts = new FakeTextToSpeech();
  const runtime = options.runtime ?? new ScriptedRuntime();
  const signals: MediaPathCall['signals'] = [];
  const temporal = {
    workflow: {
      getHandle: () => ({
        signal: async (definition: SignalDefinition<unknown[]>, ...args: unknown[]) => {
          await options.temporalBack;
          await new Promise((resolve) => setImmediate(resolve));
          signals.push({ name: definition.name, args });
        },
      }),
    },
  } as unknown as Client;
  const out: MediaPathCall['out'] = { frames: 0, marks: [], clears: 0, transfers: [] };
  const sink = {
    media: () => void out.frames++,
    mark: (name: string) => void out.marks.push(name),
    clear: () => void out.clears++,
    transfer: (to: string) => void out.transfers.push(to),
  };
  const logger = createLogger('error');
  const turnEvents: string[] = [];
  const detector = new TurnDetector({ vad: levelVoiceActivity, endpointingMs: options.endpointingMs ?? 600 });
  const push = detector.push.bind(detector);
  detector.push = async (samples, atMs) => {
    const events = await push(samples, atMs);
    turnEvents.push(...events.map((event) => event.type));
    return events;
  };
  runtime.turnsEnded = () => turnEvents.filter((type) => type === 'turn_ended').length;
  const t0 = performance.now();
  const clock = () => performance.now() - t0;
  const voice = new AgentVoice({ tts, voice: 'alloy', out: sink, clock, recording: null, logger });
  // A recording that keeps only its cuts: the interruption's, read from the interrupted utterance.
  const recordingCuts: number[] = [];
  const recording: CallRecording = {
    caller: () => {},
    agent: () => {},
    truncateAgentAfter: (atMs) => void recordingCuts.push(atMs),
    close: async () => {},
    stopped: false,
  };
  const startedAt = Date.now();
  const call: MediaPathCall = {
    startedAt,
    callId: row.id,
    phrases,
    stt,
    tts,
    runtime,
    signals,
    out,
    turnEvents,
    closed: null,
    recordingCuts,
    audio: new CallAudio({
      callId: row.id,
      callWorkflowId: `call-${row.id}`,
      temporal,
      stt,
      language: 'en-US',
      detector,
      voice,
      recording,
      close: (code, reason) => {
        call.closed = { code, reason };
      },
      out: sink,
      clock,
      startedAt,
      logger,
      voiceRuntime: runtime,
      em: () => db.orm.em.fork() as EntityManager,
      preemptiveGeneration: options.preemptiveGeneration ?? true,
      reportsTransfers: options.reportsTransfers ?? false,
      screensPickUp: options.screensPickUp ?? false,
      clientJoin: options.clientJoin ?? null,
    }),
    says(text, ms) {
      for (const frame of toMulawFrames(phrases.audio(text, ms))) call.audio.hear(frame);
    },
    silence(ms) {
      for (const frame of toMulawFrames(new Int16Array((ms * 8000) / 1000))) call.audio.hear(frame);
    },
    takeTurns: () =>
      call.audio.command({ type: 'take_turns', nextIndex: 0, heardThrough: -1, withStoredToolCalls: false }),
    async end() {
      await call.audio.abandon();
    },
  };
  return call;
}

/**
 * The media paths of a test file (or of a `describe`, when called in one): a fresh database before
 * its tests, and after them every call's audio ended and the database closed.
 */
export function mediaPathCalls(): {
  start(options?: Parameters<typeof startMediaPathCall>[1]): Promise<MediaPathCall>;
  db(): TestDatabase;
} {
  let db: TestDatabase | undefined;
  const calls: MediaPathCall[] = [];
  before(async () => {
    db = await freshDatabase();
  });
  after(async () => {
    for (const call of calls) await call.end();
    await db?.close();
  });
  return {
    async start(options = {}) {
      const call = await startMediaPathCall(db!, options);
      calls.push(call);
      return call;
    },
    db: () => db!,
  };
}
