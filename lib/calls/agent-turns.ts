import type { EntityManager } from '@mikro-orm/postgresql';
import { type AgentTool, type Call, ToolCall, TranscriptEntry } from '../../db/entities/index.js';
import { TOOL_TIMEOUT_SECONDS } from '../agent-tools/tool-rules.js';
import type { Carrier, SpeechPlayed } from '../carrier/carrier.js';
import type { Logger } from '../logger.js';
import { agentFirstSentence, agentTurnDuration, voiceToVoice } from '../metrics/service-metrics.js';
import type { AgentTurnLatency } from '../temporal/call-messages.js';
import type { RequestedToolCall, ToolExchange } from '../temporal/tool-calls.js';
import { apologyLine } from '../voice-runtime/apology.js';
import type { AgentAction, ToolCallRequest, VoiceRuntime } from '../voice-runtime/voice-runtime.js';
import { loadCall } from './call-status-changes.js';
import { conversationContextOf } from './conversation-context.js';
import { keypadLineText } from './keypad-line.js';
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

/** What one turn needs: the carrier only to speak and press keys (the media gateway's turn loop does both on the call's own audio). */
export type TurnStepDeps = Omit<AgentTurnDeps, 'carrier'> & {
  carrier: Pick<Carrier, 'say' | 'saySentence' | 'sendDigits'>;
};

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
  /** The agent's own tools the model called: the workflow runs them, then asks again. */
  toolCalls?: RequestedToolCall[];
}

/**
 * The agent's first line (per the opening-line precedence) is written and played; null when it
 * listens first. `listenFirst`: the far end already spoke (answering-machine detection heard a
 * person or a phone menu first), so the agent answers that instead of opening.
 */
export async function connectAgent(
  deps: AgentTurnDeps,
  callId: string,
  step: Pick<StepContext, 'signal'>,
  listenFirst = false,
): Promise<TranscriptLine | null> {
  const call = await loadCall(deps.em, callId);
  const text = listenFirst
    ? null
    : await deps.voiceRuntime.openingLine(conversationContextOf(call), { signal: step.signal });
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
  deps: TurnStepDeps,
  input: {
    callId: string;
    /** What the person said; none when the agent goes on after its tools answered (`index`). */
    heard?: TranscriptLine;
    /** The agent line's index when there is no `heard` line. */
    index?: number;
    /** When the agent starts answering: the end of what it heard, in simulated seconds. */
    answerAtSeconds: number;
    /** This turn's tool calls so far with what each gave (the earlier turns' are read from tool_calls). */
    toolExchanges?: ToolExchange[];
    /** The call has tool calls stored: they are read and shown to the model. */
    withStoredToolCalls?: boolean;
    /** False: the turn's or the call's tool limit is reached, the agent's own tools are not offered. */
    offerTools?: boolean;
    /** A call with audio: when the person stopped speaking and was transcribed (epoch ms), for the latency. */
    speechTiming?: { speechEndedAt: number; transcribedAt: number };
    hangUpWithLastLine?: boolean;
    /**
     * What the caller of the step already holds: the call and the lines before this turn's (the
     * media gateway's turn loop keeps them between its turns), so the model is asked without a read.
     */
    known?: { call: Call; before: TranscriptLine[] };
  },
  step: StepContext,
): Promise<AgentTurnResult> {
  const { em } = deps;
  const { callId } = input;
  // The model is asked as soon as the call and the lines before this one are read: the person's
  // line is written meanwhile (three round trips in a row were a third of the turn's own time at
  // load; docs/performance.md, "Turn latency at scale"), and is in before the agent's line is.
  const { heard } = input;
  const index = heard ? heard.index + 1 : input.index!;
  const [call, before, stored] = await Promise.all([
    input.known?.call ?? loadCall(em.fork(), callId),
    input.known?.before ?? loadTranscript(em.fork(), callId, heard ? heard.index : index),
    input.withStoredToolCalls ? loadToolExchanges(em.fork(), callId) : [],
  ]);
  const heardWritten = heard
    ? recordLines(em.fork(), callId, [heard]).then(
        () => null,
        (error: unknown) => error,
      )
    : Promise.resolve(null);
  const transcript = heard ? [...before, heard] : before;
  const thisTurn = input.toolExchanges ?? [];
  const toolExchanges = [...stored.filter((row) => !thisTurn.some((e) => e.id === row.id)), ...thisTurn];
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
    ...(toolExchanges.length ? { toolExchanges } : {}),
    ...(input.offerTools === false ? { offerTools: false } : {}),
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
  const spoken = await em.fork().findOne(TranscriptEntry, { call: callId, index, role: 'agent' });
  // Keys pressed are the agent's next line, after its words (`[keypad] 1`).
  const keypad = turn.digits
    ? await pressKeys(deps, callId, spoken ? spoken.index + 1 : index, turn.digits, input.answerAtSeconds)
    : null;
  const hungUp = Boolean(
    spoken && input.hangUpWithLastLine && turn.next.kind === 'hang_up' && !turn.toolCalls?.length,
  );
  let played: SpeechPlayed | undefined;
  if (spoken) {
    await sentences.settled();
    played = await deps.carrier.say({
      callId,
      index: spoken.index,
      text: spoken.text,
      ...(hungUp ? { hangUp: true } : {}),
    });
  }
  if (keypad) await keypad.press();
  const timing = input.speechTiming;
  if (timing) {
    const firstToken = startedAt + (latency.firstTokenMs ?? answerMs);
    latency.fromSpeechEnd = {
      transcriptMs: timing.transcribedAt - timing.speechEndedAt,
      firstTokenMs: firstToken - timing.speechEndedAt,
      firstAudioMs: played?.firstAudioAt ? played.firstAudioAt - timing.speechEndedAt : null,
    };
  }
  const toolCalls = turn.toolCalls?.length
    ? requestedToolCalls(call.agentSnapshot.tools ?? [], turn.toolCalls)
    : undefined;
  deps.logger?.info('agent turn', {
    callId,
    ...latency,
    next: toolCalls ? 'tools' : turn.next.kind,
    attempt: step.attempt,
  });
  observeTurn(latency);
  const line = keypad?.line ?? (spoken ? transcriptLineOf(spoken) : null);
  return {
    line,
    next: turn.next,
    latency,
    ...(hungUp ? { hungUp } : {}),
    ...(toolCalls ? { toolCalls } : {}),
  };
}

/**
 * The keys the agent presses, written as its line `index` (`[keypad] 1`); `press` sends them on
 * the call once its words are played. A retry finds the line written and sends the keys again:
 * a menu that heard them twice is rarer than one that never did.
 */
async function pressKeys(
  deps: TurnStepDeps,
  callId: string,
  index: number,
  digits: string,
  offsetSeconds: number,
): Promise<{ line: TranscriptLine; press: () => Promise<void> }> {
  const line: TranscriptLine = { index, role: 'agent', text: keypadLineText(digits), offsetSeconds };
  await recordLines(deps.em, callId, [line]);
  return {
    line,
    press: async () => {
      if (!deps.carrier.sendDigits) throw new Error(`call ${callId}: its carrier cannot send keys`);
      await deps.carrier.sendDigits({ callId, index, digits });
    },
  };
}

/** The model's calls of the agent's own tools, with what the call needs of each tool to run it. */
function requestedToolCalls(tools: AgentTool[], calls: ToolCallRequest[]): RequestedToolCall[] {
  return calls.map((request) => {
    const tool = tools.find((candidate) => candidate.name === request.name);
    return {
      name: request.name,
      arguments: request.arguments,
      speakWhileWaiting: tool?.speakWhileWaiting ?? null,
      timeoutSeconds: tool?.timeoutSeconds ?? TOOL_TIMEOUT_SECONDS.default,
    };
  });
}

/** The call's tool calls that gave the model something, in the order they were made. */
export async function loadToolExchanges(em: EntityManager, callId: string): Promise<ToolExchange[]> {
  const rows = await em.find(
    ToolCall,
    { call: callId, result: { $ne: null } },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    arguments: JSON.stringify(row.arguments),
    result: row.result!,
    afterLineIndex: row.afterLineIndex,
  }));
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

/**
 * A line the agent says on its own, outside the model's answers (a tool's `speak_while_waiting`):
 * written, then played; a retry finds the line written and plays it again from where it stopped.
 */
export async function sayAgentLine(
  deps: Pick<AgentTurnDeps, 'em' | 'carrier'>,
  input: { callId: string; line: TranscriptLine },
): Promise<void> {
  await recordLines(deps.em, input.callId, [input.line]);
  await deps.carrier.say({ callId: input.callId, index: input.line.index, text: input.line.text });
}

/** The turn's timings as metrics (lib/metrics/service-metrics.ts). */
function observeTurn(latency: AgentTurnLatency): void {
  agentTurnDuration.observe(latency.answerMs / 1000);
  if (latency.firstSentenceMs !== null) agentFirstSentence.observe(latency.firstSentenceMs / 1000);
  const firstAudioMs = latency.fromSpeechEnd?.firstAudioMs;
  if (firstAudioMs !== null && firstAudioMs !== undefined) voiceToVoice.observe(firstAudioMs / 1000);
}
