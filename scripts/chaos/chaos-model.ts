import {
  type ChatStandIn,
  endCall,
  type SeenRequest,
  type StandInReply,
  startChatStandIn,
  streamed,
  transferCall,
} from '../../test/support/chat-completions-stand-in.js';

// `npm run chaos -- --agent llm`: every agent speaks through the language-model runtime
// (VOICE_LLM_URL), here a local OpenAI-compatible stand-in streaming its answers after a short
// delay, so the faults land on the model's turns (local activities in the call's workflow task)
// as they would in production. Its answers follow the simulated callees' scripts: each line is
// new (the checks count a line twice in a row as doubled), it transfers when asked for a person
// and hangs up after a goodbye.

/** Where a transfer goes: the simulator's front desk, as TRANSFER_NUMBER's default. */
const TRANSFER_TO = '+4722000100';

function chaosModel(request: SeenRequest): StandInReply {
  const messages: { role: string; content: string | null }[] = request.body.messages;
  const heard = messages.filter((message) => message.role === 'user');
  const last = messages.at(-1);
  if (last?.role !== 'user') return streamed('Hello, this is the chaos agent calling about your booking.');
  const text = last?.content ?? '';
  if (/\bBye\b/.test(text)) return streamed('Goodbye, and thank you for your time!', [endCall()]);
  if (/real person|manager/.test(text))
    return streamed('Of course, connecting you now.', [transferCall(TRANSFER_TO)]);
  return { kind: 'stream', text: `Thank you. Noted, point ${heard.length}. Anything else?`, chunkDelayMs: 5 };
}

/** The stand-in, answering every request after `delayMs` (a model's time to first token). */
export async function startChaosModel(delayMs = 200): Promise<ChatStandIn> {
  return startChatStandIn(async (request) => {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return chaosModel(request);
  });
}

/** The service's settings that put its agents on the stand-in. */
export function chaosModelEnv(model: ChatStandIn): NodeJS.ProcessEnv {
  return { VOICE_LLM_URL: model.url, VOICE_LLM_MODEL: 'chaos-stand-in', VOICE_LLM_API_KEY: 'sk-chaos' };
}
