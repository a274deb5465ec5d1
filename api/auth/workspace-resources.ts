import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent, PhoneNumber } from '../../db/entities/index.js';
import { resourceMissing } from '../http/errors.js';
import type { AgentFields } from '../presenters/agent.js';
import type { ReadPool } from '../read-pool.js';

// Loading a resource by id inside the key's workspace. An id from another workspace, or of a
// deleted agent, is answered exactly like an id that never existed: 404 resource_missing.

export async function findAgentOr404(
  em: EntityManager,
  workspaceId: string,
  agentId: string,
  param = 'agent_id',
) {
  const agent = await em.findOne(Agent, { id: agentId, workspace: workspaceId, deletedAt: null });
  if (!agent) throw resourceMissing('agent', param);
  return agent;
}

export async function findPhoneNumberOr404(em: EntityManager, workspaceId: string, phoneNumberId: string) {
  const phoneNumber = await em.findOne(PhoneNumber, { id: phoneNumberId, workspace: workspaceId });
  if (!phoneNumber) throw resourceMissing('phone number', 'phone_number_id');
  return phoneNumber;
}

const AGENT_READ_SQL = `
  select id, name, description, status, language, system_prompt, first_message, outbound_first_message,
         voice_provider, voice_id, llm_provider, llm_model, tools, transfer_destinations,
         analysis_plan, voicemail, keypad,
         (extract(epoch from created_at) * 1000)::float8 as created_ms,
         (extract(epoch from updated_at) * 1000)::float8 as updated_ms
    from agents
   where id = $1 and workspace_id = $2 and deleted_at is null`;

/**
 * GET /agents/{agent_id}, the hottest read: one prepared statement on the read pool, without the
 * ORM (see docs/performance.md). Writes go through findAgentOr404.
 */
export async function readAgentOr404(
  reads: ReadPool,
  workspaceId: string,
  agentId: string,
): Promise<AgentFields> {
  const {
    rows: [row],
  } = await reads.query({ name: 'read-agent', text: AGENT_READ_SQL, values: [agentId, workspaceId] });
  if (!row) throw resourceMissing('agent', 'agent_id');
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    status: row.status,
    language: row.language,
    systemPrompt: row.system_prompt,
    firstMessage: row.first_message,
    outboundFirstMessage: row.outbound_first_message,
    voiceProvider: row.voice_provider,
    voiceId: row.voice_id,
    llmProvider: row.llm_provider,
    llmModel: row.llm_model,
    tools: row.tools ?? [],
    transferDestinations: row.transfer_destinations ?? [],
    analysisPlan: row.analysis_plan ?? null,
    voicemail: row.voicemail ?? null,
    keypad: row.keypad ?? null,
    createdAt: new Date(row.created_ms),
    updatedAt: new Date(row.updated_ms),
  };
}
