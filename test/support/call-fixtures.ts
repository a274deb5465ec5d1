import { randomUUID } from 'node:crypto';
import {
  Agent,
  type AgentSnapshot,
  type AgentStatus,
  Call,
  Event,
  TranscriptEntry,
} from '../../db/entities/index.js';
import type { Orm } from '../../db/orm.js';
import { createPhoneNumber, createWorkspace } from '../../lib/accounts.js';

// Rows for call tests: a workspace with a published agent and its number, and queued calls
// written the way POST /calls writes them (the agent snapshot included).

let numberSeq = 0;
/** A fresh E.164 number per call, so tests never collide on the unique phone number. */
export function uniqueNumber(prefix = '+4722'): string {
  numberSeq++;
  return `${prefix}${String(process.pid % 1000).padStart(3, '0')}${String(numberSeq).padStart(3, '0')}`;
}

export interface AgentFixture {
  workspaceId: string;
  agentId: string;
  number: string;
}

export async function createAgentFixture(
  orm: Orm,
  options: {
    workspaceId?: string;
    plan?: 'trial' | 'standard';
    status?: AgentStatus;
    name?: string;
    firstMessage?: string | null;
    outboundFirstMessage?: string | null;
    numbers?: number;
    /** BCP 47 (default en-US). */
    language?: string;
  } = {},
): Promise<AgentFixture & { numbers: string[] }> {
  const em = orm.em.fork();
  const workspaceId =
    options.workspaceId ?? (await createWorkspace(em, { name: 'Calls test', plan: options.plan })).id;
  const agent = em.create(Agent, {
    id: randomUUID(),
    workspace: workspaceId,
    name: options.name ?? 'Ada',
    description: null,
    status: options.status ?? 'published',
    language: options.language ?? 'en-US',
    systemPrompt: 'You confirm appointments.',
    firstMessage: options.firstMessage ?? null,
    outboundFirstMessage: options.outboundFirstMessage ?? null,
    voiceProvider: null,
    voiceId: null,
    llmProvider: null,
    llmModel: null,
  });
  await em.flush();
  const numbers: string[] = [];
  for (let i = 0; i < (options.numbers ?? 1); i++) {
    const phone = await createPhoneNumber(em, { workspaceId, number: uniqueNumber() });
    phone.agent = agent.id;
    numbers.push(phone.number);
  }
  await em.flush();
  return { workspaceId, agentId: agent.id, number: numbers[0], numbers };
}

export async function createQueuedCall(
  orm: Orm,
  fixture: AgentFixture,
  options: {
    to: string;
    firstMessage?: string | null;
    ringTimeoutSeconds?: number;
    metadata?: Record<string, string>;
    /** Settings of the agent the call keeps (voicemail, keypad, …) beyond the fixture's own. */
    snapshot?: Partial<AgentSnapshot>;
  },
): Promise<Call> {
  const em = orm.em.fork();
  const agent = await em.findOneOrFail(Agent, { id: fixture.agentId });
  const call = em.create(Call, {
    id: randomUUID(),
    workspace: fixture.workspaceId,
    agent: agent.id,
    direction: 'outbound',
    channel: 'phone',
    status: 'queued',
    fromNumber: fixture.number,
    toNumber: options.to,
    startedAt: new Date(),
    metadata: options.metadata ?? {},
    ringTimeoutSeconds: options.ringTimeoutSeconds ?? 30,
    firstMessage: options.firstMessage ?? null,
    agentSnapshot: {
      name: agent.name,
      language: agent.language ?? null,
      systemPrompt: agent.systemPrompt ?? null,
      firstMessage: agent.firstMessage ?? null,
      outboundFirstMessage: agent.outboundFirstMessage ?? null,
      voiceProvider: null,
      voiceId: null,
      llmProvider: null,
      llmModel: null,
      tools: agent.tools ?? [],
      ...options.snapshot,
    },
  });
  await em.flush();
  return call;
}

/** The call, its transcript and its events as stored. */
export async function storedCall(orm: Orm, callId: string) {
  const em = orm.em.fork();
  const call = await em.findOneOrFail(Call, { id: callId });
  const transcript = await em.find(TranscriptEntry, { call: callId }, { orderBy: { index: 'asc' } });
  const events = await em.find(Event, { call: callId }, { orderBy: { createdAt: 'asc' } });
  return {
    call,
    transcript: transcript.map((line) => ({ role: line.role, text: line.text, index: line.index })),
    events: events.map((event) => ({ id: event.id, type: event.type, body: JSON.parse(event.body) })),
  };
}
