import type { Agent } from '../../db/entities/index.js';
import type { VoiceRuntimeInfo } from '../agent-runtime.js';
import { presentAgentTool } from './agent-tool.js';
import { presentAnalysisPlan } from './analysis-plan.js';
import { presentTransferDestination } from './transfer-destination.js';
import { presentKeypad, presentVoicemail } from './voicemail.js';

/** What the Agent object is made of: an entity, or a row read without the ORM (the hot read). */
export type AgentFields = Pick<
  Agent,
  | 'id'
  | 'name'
  | 'description'
  | 'status'
  | 'language'
  | 'systemPrompt'
  | 'firstMessage'
  | 'outboundFirstMessage'
  | 'voiceProvider'
  | 'voiceId'
  | 'llmProvider'
  | 'llmModel'
  | 'tools'
  | 'transferDestinations'
  | 'analysisPlan'
  | 'voicemail'
  | 'keypad'
  | 'createdAt'
  | 'updatedAt'
>;

/**
 * The spec's Agent object. `llm` is the deployment's language model (`runtime`, api/agent-runtime.ts),
 * what the agent's calls run with; without a runtime, what the agent recorded at creation.
 */
export function presentAgent(
  agent: AgentFields,
  runtime?: Pick<VoiceRuntimeInfo, 'llmProvider' | 'llmModel'>,
) {
  return {
    object: 'agent',
    id: agent.id,
    name: agent.name,
    description: agent.description ?? null,
    status: agent.status,
    language: agent.language ?? null,
    system_prompt: agent.systemPrompt ?? null,
    first_message: agent.firstMessage ?? null,
    outbound_first_message: agent.outboundFirstMessage ?? null,
    voice: { provider: agent.voiceProvider ?? null, voice_id: agent.voiceId ?? null },
    llm: runtime
      ? { provider: runtime.llmProvider, model: runtime.llmModel }
      : { provider: agent.llmProvider ?? null, model: agent.llmModel ?? null },
    tools: (agent.tools ?? []).map(presentAgentTool),
    transfer_destinations: (agent.transferDestinations ?? []).map(presentTransferDestination),
    analysis_plan: presentAnalysisPlan(agent.analysisPlan ?? null),
    voicemail: presentVoicemail(agent.voicemail ?? null),
    keypad: presentKeypad(agent.keypad ?? null),
    created_at: agent.createdAt.toISOString(),
    updated_at: agent.updatedAt.toISOString(),
  };
}
