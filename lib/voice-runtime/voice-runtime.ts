import type { AgentSnapshot, CallChannel, CallDirection } from '../../db/entities/index.js';
import type { TranscriptLine } from '../calls/transcript.js';
import type { ToolExchange } from '../temporal/tool-calls.js';

/** What the agent needs to know about the call it is on. */
export interface ConversationContext {
  agent: AgentSnapshot;
  direction: CallDirection;
  channel: CallChannel;
  /** The call request's `first_message`: null when omitted, '' when the other side speaks first. */
  callFirstMessage: string | null;
  metadata: Record<string, string>;
  /** The business's own number on this call (outbound: `from`, inbound: `to`); a transfer goes here by default. */
  ownNumber: string | null;
}

/** What the agent does after the other person spoke. */
export type AgentAction = { kind: 'continue' } | { kind: 'hang_up' } | { kind: 'transfer'; to: string };

/** How long the runtime took for one turn, in milliseconds from the moment it was asked. */
export interface TurnTiming {
  /** Until the first token of the answer (text or a tool call); null when nothing streamed. */
  firstTokenMs: number | null;
  /** Until the whole answer was in. */
  answerMs: number;
}

/** A call of one of the agent's own tools (agent-tools spec), as the model made it. */
export interface ToolCallRequest {
  name: string;
  /** The arguments as the model gave them, JSON text (checked against the tool's parameters later). */
  arguments: string;
}

export interface AgentTurn {
  /** What the agent says; '' when it only acts (a tool call without words). */
  say: string;
  next: AgentAction;
  /**
   * The agent's own tools the model called (then `next` is `continue`): the call runs them and
   * asks again with their results (`RespondOptions.toolExchanges`).
   */
  toolCalls?: ToolCallRequest[];
  /**
   * Keys the agent presses after `say` (`send_digits`, telephony spec section 7: `[0-9*#w]{1,32}`,
   * `w` a 0.5 s pause); only when the agent's `keypad.send` is on.
   */
  digits?: string;
  /** Set by runtimes that call out (a language model); the scripted agent answers at once. */
  timing?: TurnTiming;
}

/** How the caller of `respond` takes the answer while it is being made. */
export interface RespondOptions {
  /**
   * Each complete sentence of what the agent says, as soon as the runtime has it (before the whole
   * answer is in), so the voice side can start speaking the first one while the rest is made.
   * Together, in order, the sentences are the turn's `say`.
   */
  onSentence?: (sentence: string) => void;
  /** Aborts the turn (the activity was cancelled or timed out). */
  signal?: AbortSignal;
  /** The call's tool calls so far and what each gave the model, each after the line it followed. */
  toolExchanges?: ToolExchange[];
  /** False: the agent's own tools are not offered (the turn's or the call's limit is reached). */
  offerTools?: boolean;
}

/**
 * A failure of the runtime. `retryable`: a passing trouble (rate limit, server error, timeout)
 * worth another attempt, after `retryAfterMs` when the runtime was told how long to wait;
 * otherwise a refusal no retry can fix (bad key, unknown model, malformed request).
 * The message never carries a secret.
 */
export class VoiceRuntimeError extends Error {
  override name = 'VoiceRuntimeError';
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/**
 * The voice runtime port: the agent's side of a live conversation (speech recognition, the
 * language model and speech synthesis in a real deployment). Lines reach the far end through the
 * carrier; this port only decides what the agent says.
 */
export interface VoiceRuntime {
  /**
   * True when the runtime answers in the worker itself, without calling out (the scripted agent):
   * it answers at once, with the short timeouts of the live steps. A runtime that waits on a
   * language model leaves it unset: its steps get timeouts derived from its own (local activities
   * too since `agent-turns-in-task`; the workflow asks before the first step,
   * lib/temporal/call-runtime.ts).
   */
  readonly runsInProcess?: boolean;
  /**
   * How long one request of a runtime that calls out may take (`VOICE_LLM_TIMEOUT_MS`); the
   * activities of the agent's steps allow that and a margin (workflows/activity-options.ts).
   * Unset: 10 s.
   */
  readonly timeoutMs?: number;
  /** The agent's first words once the call is connected, or null when the other person speaks first. */
  openingLine(context: ConversationContext, options?: RespondOptions): Promise<string | null>;
  /**
   * A warm transfer's briefing (telephony spec section 8): one or two sentences telling the person
   * the call goes to who is calling and why, made from the conversation so far. Optional: without
   * it the service makes one from the transcript (lib/voice-runtime/warm-transfer-lines.ts).
   */
  briefing?(
    context: ConversationContext,
    transcript: TranscriptLine[],
    options?: RespondOptions,
  ): Promise<string>;
  /** The agent's next line after the other person spoke (the transcript ends with their line). */
  respond(
    context: ConversationContext,
    transcript: TranscriptLine[],
    options?: RespondOptions,
  ): Promise<AgentTurn>;
}
