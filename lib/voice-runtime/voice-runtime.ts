import type { AgentSnapshot, CallChannel, CallDirection } from '../../db/entities/index.js';
import type { TranscriptLine } from '../calls/transcript.js';

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

export interface AgentTurn {
  say: string;
  next: AgentAction;
}

/**
 * The voice runtime port: the agent's side of a live conversation (speech recognition, the
 * language model and speech synthesis in a real deployment). Lines reach the far end through the
 * carrier; this port only decides what the agent says.
 */
export interface VoiceRuntime {
  /** The agent's first words once the call is connected, or null when the other person speaks first. */
  openingLine(context: ConversationContext): Promise<string | null>;
  /** The agent's next line after the other person spoke (the transcript ends with their line). */
  respond(context: ConversationContext, transcript: TranscriptLine[]): Promise<AgentTurn>;
}
