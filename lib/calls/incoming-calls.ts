import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { Agent, Call, PhoneNumber } from '../../db/entities/index.js';
import { OperatorError } from '../accounts.js';
import type { IncomingCallAnswer, IncomingPhoneCall } from '../carrier/incoming-call.js';
import type { Settings } from '../settings.js';
import { isUuid } from '../uuid.js';
import { admitToWorkspace, type WorkspaceRefusal } from './admit-to-workspace.js';
import { agentSnapshotOf } from './agent-snapshot.js';
import { startCallWorkflow } from './start-call-workflow.js';

// Calls that come in: a person dials a workspace number, or talks to an agent in the dashboard's
// test panel or a web widget. Each one taken becomes a Call (direction `inbound`) and runs through
// the same call workflow as an outbound call, started `answered` (there is nothing to dial). Both
// pass the workspace's admission (admit-to-workspace.ts: the minutes quota and the trial plan's
// one line); a refusal comes back as a union each caller answers in its own way.

export interface IncomingCallDeps {
  /** A fresh EntityManager (a fork) for this call. */
  em: EntityManager;
  temporal: Client;
  settings: Pick<Settings, 'taskQueuePrefix'>;
}

/**
 * The service's side of the carrier's incoming-call webhook: the number's agent is looked up now
 * (a reassignment applies from the next call) and the call is taken only for a published agent.
 */
export async function answerIncomingPhoneCall(
  deps: IncomingCallDeps,
  incoming: IncomingPhoneCall,
  /**
   * `mediaGateway`: a call whose audio this media gateway holds (its control URL): a Media Streams
   * call. `onAgent`: the agent is known (before the call is stored and its workflow started).
   */
  options: { mediaGateway?: string; onAgent?: (agent: Agent) => void } = {},
): Promise<IncomingCallAnswer> {
  const { em } = deps;
  const number = await em.findOne(PhoneNumber, { number: incoming.to, status: 'active' });
  if (!number) return { answered: false, reason: 'unknown_number' };
  const agent = number.agent ? await em.findOne(Agent, { id: number.agent, deletedAt: null }) : null;
  if (!agent) return { answered: false, reason: 'no_agent' };
  if (agent.status !== 'published') return { answered: false, reason: 'agent_not_published' };
  options.onAgent?.(agent);
  const taken = await takeCall(deps, agent, {
    channel: 'phone',
    fromNumber: incoming.from,
    toNumber: incoming.to,
    metadata: {},
    mediaGateway: options.mediaGateway ?? null,
  });
  if ('code' in taken) return { answered: false, reason: taken.code };
  return { answered: true, callId: taken.id };
}

/** Agent statuses that take web calls: the test panel is where a draft agent is tried out. */
const WEB_CALL_STATUSES = ['draft', 'published'];

/**
 * A browser call to an agent (dashboard test panel, web widget). An agent that cannot take it is
 * refused with OperatorError; the workspace's refusal (quota, trial line) is returned.
 */
export async function startWebCall(
  deps: IncomingCallDeps,
  input: {
    agentId: string;
    fromLabel?: string;
    /** The call's metadata (its `{{variables}}`); `from_label` is the label's. */
    metadata?: Record<string, string>;
    /** The dashboard's test panel: the far end is the person in the browser, not the simulator. */
    browserFarEnd?: boolean;
    /** The media gateway (control URL) the browser's microphone streams to: a web call with audio (Talk). */
    mediaGateway?: string;
  },
): Promise<{ started: true; callId: string } | { started: false; refusal: WorkspaceRefusal }> {
  const { em } = deps;
  const agent = isUuid(input.agentId)
    ? await em.findOne(Agent, { id: input.agentId, deletedAt: null })
    : null;
  if (!agent) throw new OperatorError(`no agent with id ${input.agentId}`);
  if (!WEB_CALL_STATUSES.includes(agent.status)) {
    throw new OperatorError(
      `agent ${agent.id} is ${agent.status}; web calls need a draft or published agent`,
    );
  }
  const label = input.fromLabel?.trim() || null;
  if (label && label.length > 200)
    throw new OperatorError("a web call's from label is at most 200 characters");
  const taken = await takeCall(deps, agent, {
    channel: 'web',
    fromNumber: null,
    toNumber: null,
    fromLabel: label,
    browserFarEnd: input.browserFarEnd ?? false,
    mediaGateway: input.mediaGateway ?? null,
    // The label is who the test panel or widget says is calling; metadata shows it on the call.
    metadata: { ...input.metadata, ...(label ? { from_label: label } : {}) },
  });
  if ('code' in taken) return { started: false, refusal: taken };
  return { started: true, callId: taken.id };
}

/**
 * Admits the call to the workspace and records it with the agent's settings as they are now (a
 * later change or an unpublish does not reach it), in one transaction; then starts its workflow.
 * When the start fails the row goes again: no Call is kept for a call that was never taken.
 */
async function takeCall(
  { em, temporal, settings }: IncomingCallDeps,
  agent: Agent,
  fields: Pick<Call, 'channel' | 'fromNumber' | 'toNumber' | 'metadata'> & {
    fromLabel?: string | null;
    browserFarEnd?: boolean;
    mediaGateway?: string | null;
  },
): Promise<Call | WorkspaceRefusal> {
  const now = new Date();
  const admitted = await em.transactional(async (tx) => {
    const refusal = await admitToWorkspace(tx, agent.workspace, 'inbound', now);
    return refusal ?? recordCall(tx, agent, now, fields);
  });
  if ('code' in admitted) return admitted;
  const call = admitted;
  try {
    await startCallWorkflow(temporal, settings, call, { answered: true });
  } catch (error) {
    await em.nativeDelete(Call, { id: call.id });
    throw error;
  }
  return call;
}

async function recordCall(
  em: EntityManager,
  agent: Agent,
  now: Date,
  fields: Parameters<typeof takeCall>[2],
): Promise<Call> {
  const call = em.create(Call, {
    id: randomUUID(),
    workspace: agent.workspace,
    agent: agent.id,
    direction: 'inbound',
    // It rings at our side until the workflow picks it up, moments later.
    status: 'ringing',
    startedAt: now,
    ringTimeoutSeconds: null,
    firstMessage: null,
    agentSnapshot: agentSnapshotOf(agent),
    fromLabel: null,
    ...fields,
  });
  await em.flush();
  return call;
}
