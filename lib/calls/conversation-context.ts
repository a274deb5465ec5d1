import type { Call } from '../../db/entities/index.js';
import type { ConversationContext } from '../voice-runtime/voice-runtime.js';

/** What the voice runtime knows about a call: the agent as it was when the call started, and the request. */
export function conversationContextOf(call: Call): ConversationContext {
  return {
    agent: call.agentSnapshot,
    direction: call.direction,
    channel: call.channel,
    callFirstMessage: call.firstMessage ?? null,
    metadata: call.metadata,
    ownNumber: (call.direction === 'outbound' ? call.fromNumber : call.toNumber) ?? null,
  };
}
