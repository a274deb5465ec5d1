import { defineEntity, p } from '@mikro-orm/core';
import { Workspace } from './workspace.js';

export const AGENT_STATUSES = ['draft', 'published', 'unpublished', 'archived'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

/**
 * A voice agent. DELETE sets `deletedAt` (a tombstone) rather than removing the row, so past
 * calls keep their `agent_id`; every read filters deleted agents out.
 */
const AgentSchema = defineEntity({
  name: 'Agent',
  tableName: 'agents',
  indexes: [{ properties: ['workspace', 'createdAt', 'id'] }],
  properties: {
    id: p.uuid().primary(),
    workspace: () => p.manyToOne(Workspace).mapToPk().deleteRule('cascade'),
    name: p.string().length(200),
    description: p.text().nullable(),
    status: p.string().length(20).$type<AgentStatus>(),
    language: p.string().length(20).nullable(),
    systemPrompt: p.text().nullable(),
    firstMessage: p.text().nullable(),
    outboundFirstMessage: p.text().nullable(),
    voiceProvider: p.string().length(100).nullable(),
    voiceId: p.string().length(200).nullable(),
    llmProvider: p.string().length(100).nullable(),
    llmModel: p.string().length(200).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    deletedAt: p.datetime().nullable(),
  },
});

export class Agent extends AgentSchema.class {}
AgentSchema.setClass(Agent);

export { AgentSchema };
