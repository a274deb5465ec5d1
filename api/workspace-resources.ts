import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent, PhoneNumber } from '../db/entities/index.js';
import { resourceMissing } from './errors.js';

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
