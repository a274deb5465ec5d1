import { fillVariables } from './dynamic-variables.js';
import { introductionIn } from './scripted-lines.js';
import type { ConversationContext } from './voice-runtime.js';

/**
 * The opening line by the spec's precedence. Outbound: the call's `first_message`, else the
 * agent's `outbound_first_message`, else its `first_message`. Inbound and web calls: the agent's
 * `first_message`, and without one the agent listens (the caller rang, so they speak first).
 * An empty string means the other person speaks first (null here); undefined means nothing is
 * configured on an outbound call and the agent introduces itself. Dynamic variables (`{{name}}`
 * from the call's metadata, lib/voice-runtime/dynamic-variables.ts) are filled in; a line that
 * is empty once filled in is not said either.
 */
export function configuredOpeningLine(context: ConversationContext): string | null | undefined {
  const fill = (line: string) => fillVariables(line, context.metadata) || null;
  if (context.direction === 'inbound')
    return context.agent.firstMessage ? fill(context.agent.firstMessage) : null;
  const candidates = [
    context.callFirstMessage,
    context.agent.outboundFirstMessage,
    context.agent.firstMessage,
  ];
  for (const candidate of candidates) {
    if (candidate === null || candidate === undefined) continue;
    return candidate === '' ? null : fill(candidate);
  }
  return undefined;
}

/** Who the agent is and, on a call it placed, why it is calling. */
export function introduction(context: ConversationContext): string {
  const name = context.agent.name;
  if (context.direction !== 'outbound') return introductionIn(context.agent.language, name);
  const purpose = context.metadata.purpose?.trim() || 'to follow up on your recent request';
  const reason = /^(to|about|regarding|because)\b/i.test(purpose) ? purpose : `about ${purpose}`;
  return `Hi, this is ${name}, an AI assistant. I'm calling ${reason}. Do you have a minute?`;
}
