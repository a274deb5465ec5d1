import type { EntityManager } from '@mikro-orm/postgresql';
import { TranscriptEntry } from '../../db/entities/index.js';
import type { Carrier, SpeechPlayed } from '../carrier/carrier.js';
import type { Logger } from '../logger.js';
import { agentFirstSentence, agentTurnDuration, voiceToVoice } from '../metrics/service-metrics.js';
import type { AgentTurnLatency } from '../temporal/call-messages.js';
import { apologyLine } from '../voice-runtime/apology.js';
import type { AgentAction, VoiceRuntime } from '../voice-runtime/voice-runtime.js';
import { loadCall } from './call-status-changes.js';
import { conversationContextOf } from './conversation-context.js';
import { SentenceRelay } from './sentence-relay.js';
import type { TranscriptLine } from './transcript.js';
import { loadTranscript, recordLines, transcriptLineOf } from './transcript-rows.js';

// What the agent says on a call: its first line, each answer, and the apology when it cannot go
// on. Each line is stored before it is played, so a retried step plays the stored line and the
// far end hears one version of it.

export interface AgentTurnDeps {
  em: EntityManager;
  carrier: Carrier;
  voiceRuntime: VoiceRuntime;
  /** The service's log, for each agent turn's latency (`agent turn`); none: not logged. */
  logger?: Logger;
}

/** Where the step runs: its cancellation, and its attempt (for the log). */
export interface StepContext {
  signal: AbortSignal;
  attempt: number;
}

export interface AgentTurnResult {
  line: TranscriptLine | null;
  next: AgentAction;
  latency?: AgentTurnLatency;
  hungUp?: boolean;
}

/** The agent's first line (per the opening-line precedence) is written and played; null when it listens first. */
export async function connectAgent(
  deps: AgentTurnDeps,
  callId: string,
  step: Pick<StepContext, 'signal'>,
): Promise<TranscriptLine | null> {
  const call = await loadCall(deps.em, callId);
  const text = await deps.voiceRuntime.openingLine(conversationContextOf(call), { signal: step.signal });
  const line: TranscriptLine | null = text ? { index: 0, role: 'agent', text, offsetSeconds: 0 } : null;
  if (line) await recordLines(deps.em, callId, [line]);
  await deps.carrier.connectAgent({ callId, opening: line && { index: 0, text: line.text } });
  return line;
}

/**
 * Writes what the person said, asks the voice runtime for the agent's answer, writes and plays
 * it. `line` is null when the agent only acted (a tool call without words). `latency` is the
 * turn's timing (also logged as `agent turn`). With `hangUpWithLastLine`, a line after which
 * the agent hangs up is played with the hang-up (`hungUp`: the far end is released).
 */
export async function takeAgentTurn(
  deps: AgentTurnDeps,
  input: {
    callId: string;
    heard: TranscriptLine;
    /** When the agent starts answering: the end of what it heard, in simulated seconds. */
    answerAtSeconds: number;
    /** A call with audio: when the person stopped speaking and was transcribed (epoch ms), for the latency. */
    speechTiming?: { speechEndedAt: number; transcribedAt: number };
    hangUpWithLastLine?: boolean;
  },
  step: StepContext,
): Promise<AgentTurnResult> {
  const { em } = deps;
  const { callId } = input;
  // The model is asked as soon as the call and the lines before this one are read: the person's
  // line is written meanwhile (three round trips in a row were a third of the turn's own time at
  // load; docs/performance.md, "Turn latency at scale"), and is in before the agent's line is.
  const [call, before] = await Promise.all([
    loadCall(em.fork(), callId),
    loadTranscript(em.fork(), callId, input.heard.index),
  ]);
  const heardWritten = recordLines(em.fork(), callId, [input.heard]).then(
    () => null,
    (error: unknown) => error,
  );
  const transcript = [...before, input.heard];
  const index = input.heard.index + 1;
  const started = performance.now();
  const startedAt = Date.now();
  const elapsed = () => Math.round(performance.now() - started);
  let firstSentenceMs: number | null = null;
  // Sentences come as soon as each is complete. A carrier with audio starts speaking the first
  // while the rest is made (`saySentence`); the whole line is then stored and played with `say`,
  // which plays it from the first sentence not yet played, so the far end hears each sentence
  // once. (A retried turn whose answer differs keeps the sentences already played and the
  // stored line's rest: a passing runtime failure in mid-answer is rare, a repeat is worse.)
  const sentences = new SentenceRelay(deps, callId, index, deps.logger);
  const turn = await deps.voiceRuntime.respond(conversationContextOf(call), transcript, {
    signal: step.signal,
    onSentence: (sentence) => {
      firstSentenceMs ??= elapsed();
      sentences.relay(sentence);
    },
  });
  // One clock for the three: from the moment the runtime was asked (the runtime's own first
  // token time starts a moment later, so it never comes out after the whole answer).
  const answerMs = elapsed();
  const notWritten = await heardWritten;
  if (notWritten) throw notWritten;
  const latency: AgentTurnLatency = {
    index,
    firstTokenMs: turn.timing ? turn.timing.firstTokenMs : answerMs,
    firstSentenceMs: firstSentenceMs ?? (turn.timing ? null : answerMs),
    answerMs,
  };
  if (turn.say) {
    // A retry after the line was written plays the stored line, so the far end hears one version.
    await recordLines(em, callId, [
      { index, role: 'agent', text: turn.say, offsetSeconds: input.answerAtSeconds },
    ]);
  }
  const stored = await em.fork().findOne(TranscriptEntry, { call: callId, index, role: 'agent' });
  const hungUp = Boolean(stored && input.hangUpWithLastLine && turn.next.kind === 'hang_up');
  let played: SpeechPlayed | undefined;
  if (stored) {
    await sentences.settled();
    played = await deps.carrier.say({
      callId,
      index: stored.index,
      text: stored.text,
      ...(hungUp ? { hangUp: true } : {}),
    });
  }
  const timing = input.speechTiming;
  if (timing) {
    const firstToken = startedAt + (latency.firstTokenMs ?? answerMs);
    latency.fromSpeechEnd = {
      transcriptMs: timing.transcribedAt - timing.speechEndedAt,
      firstTokenMs: firstToken - timing.speechEndedAt,
      firstAudioMs: played?.firstAudioAt ? played.firstAudioAt - timing.speechEndedAt : null,
    };
  }
  deps.logger?.info('agent turn', { callId, ...latency, next: turn.next.kind, attempt: step.attempt });
  observeTurn(latency);
  const line = stored ? transcriptLineOf(stored) : null;
  return hungUp ? { line, next: turn.next, latency, hungUp } : { line, next: turn.next, latency };
}

/**
 * The agent cannot go on (a live step failed past its budget): it says a short apology in its
 * language before the call is released. Written after every line already stored; a retry
 * finds the apology it wrote and plays that.
 */
export async function apologize(
  deps: Pick<AgentTurnDeps, 'em' | 'carrier'>,
  input: { callId: string; index: number; offsetSeconds: number },
): Promise<TranscriptLine> {
  const { em, carrier } = deps;
  const call = await loadCall(em, input.callId);
  const text = apologyLine(call.agentSnapshot.language);
  const last = await em.findOne(TranscriptEntry, { call: input.callId }, { orderBy: { index: 'desc' } });
  const alreadySaid = last && last.role === 'agent' && last.text === text && last.index >= input.index;
  const index = alreadySaid ? last.index : Math.max(input.index, (last?.index ?? -1) + 1);
  const line: TranscriptLine = { index, role: 'agent', text, offsetSeconds: input.offsetSeconds };
  await recordLines(em, input.callId, [line]);
  await carrier.say({ callId: input.callId, index, text });
  return alreadySaid ? transcriptLineOf(last) : line;
}

/** The turn's timings as metrics (lib/metrics/service-metrics.ts). */
function observeTurn(latency: AgentTurnLatency): void {
  agentTurnDuration.observe(latency.answerMs / 1000);
  if (latency.firstSentenceMs !== null) agentFirstSentence.observe(latency.firstSentenceMs / 1000);
  const firstAudioMs = latency.fromSpeechEnd?.firstAudioMs;
  if (firstAudioMs !== null && firstAudioMs !== undefined) voiceToVoice.observe(firstAudioMs / 1000);
}
