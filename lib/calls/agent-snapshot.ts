import {
  type Agent,
  type AgentSnapshot,
  DEFAULT_KEYPAD,
  DEFAULT_VOICEMAIL,
} from '../../db/entities/index.js';

/** The agent's settings as they are now, kept on a call so a later change applies from the next call. */
export function agentSnapshotOf(agent: Agent): AgentSnapshot {
  return {
    name: agent.name,
    language: agent.language ?? null,
    systemPrompt: agent.systemPrompt ?? null,
    firstMessage: agent.firstMessage ?? null,
    outboundFirstMessage: agent.outboundFirstMessage ?? null,
    voiceProvider: agent.voiceProvider ?? null,
    voiceId: agent.voiceId ?? null,
    llmProvider: agent.llmProvider ?? null,
    llmModel: agent.llmModel ?? null,
    tools: agent.tools ?? [],
    transferDestinations: agent.transferDestinations ?? [],
    analysisPlan: agent.analysisPlan ?? null,
    voicemail: agent.voicemail ?? DEFAULT_VOICEMAIL,
    keypad: agent.keypad ?? DEFAULT_KEYPAD,
  };
}
