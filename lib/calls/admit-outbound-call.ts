import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent, Call, PhoneNumber } from '../../db/entities/index.js';
import { loadDialingCountries } from '../accounts.js';
import { admitToWorkspace, type WorkspaceRefusal } from './admit-to-workspace.js';
import { agentSnapshotOf } from './agent-snapshot.js';
import {
  checkDestination,
  type DestinationRules,
  type DialingCountries,
  describeRefusal,
} from './destination-policy.js';

// Admission of an outbound call: every check that runs before anything is dialed, then the queued
// call row. One function for every way a call is placed (POST /calls today; campaigns and the
// dashboard next), so they all admit exactly alike. It runs inside the caller's transaction; the
// workspace's rules (5 and 6) are admitToWorkspace's, the one admission of every call, under a
// per-workspace advisory lock, so processes side by side never admit more calls than the limits
// allow. Checks run in this order (docs/calls.md), the first refusal wins:
//   1. the agent exists in the workspace          agent_missing
//   2. the agent is published                     agent_not_published
//   3. a number to call from                      agent_has_no_number, from_number_not_assigned,
//                                                 from_number_required
//   4. where the call may go (destination-policy.ts): not an emergency number (emergency_number);
//      not high-cost, in the workspace's dialing countries, not its own caller id
//      (destination_not_allowed); then `metadata.transfer_to` the same way, nor the call's `to`
//   5. the workspace's limits                     call_rate_limited, call_daily_limit, quota_exceeded
//   6. trial plan: one call at a time             trial_line_busy

export interface OutboundCallRequest {
  agentId: string;
  to: string;
  /** One of the agent's numbers; optional when it has exactly one. */
  from?: string;
  metadata?: Record<string, string>;
  ringTimeoutSeconds?: number;
  /** Replaces the agent's greeting for this call; '' makes the agent wait for the person. */
  firstMessage?: string;
  /** The campaign placing the call (lib/campaigns); none for POST /calls. */
  campaignId?: string;
}

/** Refusals of checks 1 to 3: the agent cannot place calls (as asked). */
export type AgentRefusal =
  | { code: 'agent_missing' }
  | { code: 'agent_not_published' }
  | { code: 'agent_has_no_number' }
  | { code: 'from_number_not_assigned' }
  | { code: 'from_number_required' };

export type AdmissionRefusal = AgentRefusal | DestinationRefused | WorkspaceRefusal;

/** A number the call would dial refused (destination-policy.ts); `param` when not `to`. */
export type DestinationRefused =
  | { code: 'emergency_number'; param?: string }
  | { code: 'destination_not_allowed'; message: string; param?: string };

/** What the deployment decides for every workspace that has not its own rule. */
export interface DeploymentRules {
  /** DIALING_COUNTRIES: for workspaces without their own `--dialing-countries`. */
  dialingCountries: DialingCountries;
}

export type Admission = { admitted: true; call: Call } | { admitted: false; refusal: AdmissionRefusal };

export const DEFAULT_RING_TIMEOUT_SECONDS = 30;

const refused = (refusal: AdmissionRefusal): Admission => ({ admitted: false, refusal });

/** The checks, then the queued call (flushed), inside the caller's transaction. */
export async function admitOutboundCall(
  em: EntityManager,
  workspaceId: string,
  request: OutboundCallRequest,
  deployment: DeploymentRules,
  now = new Date(),
): Promise<Admission> {
  const caller = await checkOutboundAgent(em, workspaceId, request.agentId, request.from);
  if ('code' in caller) return refused(caller);
  const { agent, from } = caller;
  const dialingCountries = await loadDialingCountries(em, workspaceId, deployment.dialingCountries);
  const destination = destinationRefused(request.to, { dialingCountries, ownNumbers: [from] });
  if (destination) return refused(destination);
  // The integrator's transfer target is checked when it is set, as every number the call may dial.
  const transferTo = request.metadata?.transfer_to;
  if (transferTo !== undefined) {
    const target = destinationRefused(transferTo, { dialingCountries, ownNumbers: [from, request.to] });
    if (target) return refused({ ...target, param: 'metadata.transfer_to' });
  }
  const workspaceRefusal = await admitToWorkspace(em, workspaceId, 'outbound', now);
  if (workspaceRefusal) return refused(workspaceRefusal);

  const call = em.create(Call, {
    id: randomUUID(),
    workspace: workspaceId,
    agent: agent.id,
    campaign: request.campaignId ?? null,
    direction: 'outbound',
    channel: 'phone',
    status: 'queued',
    fromNumber: from,
    toNumber: request.to,
    startedAt: now,
    metadata: request.metadata ?? {},
    ringTimeoutSeconds: request.ringTimeoutSeconds ?? DEFAULT_RING_TIMEOUT_SECONDS,
    firstMessage: request.firstMessage ?? null,
    // The agent as it is now: a change during the call applies from the next one.
    agentSnapshot: agentSnapshotOf(agent),
  });
  await em.flush();
  return { admitted: true, call };
}

/**
 * Check 4 on one number (destination-policy.ts) as an admission refusal: the emergency table keeps
 * its own code, every other refusal is destination_not_allowed with a sentence saying why.
 * Campaigns make it on their recipients at creation too.
 */
export function destinationRefused(number: string, rules: DestinationRules): DestinationRefused | null {
  const refusal = checkDestination(number, rules);
  if (!refusal) return null;
  if (refusal.code === 'emergency_number') return { code: 'emergency_number' };
  return { code: 'destination_not_allowed', message: describeRefusal(number, refusal) };
}

/**
 * Checks 1 to 3: the agent exists, is published and has a number to call from. Campaigns make
 * them at creation and before every call.
 */
export async function checkOutboundAgent(
  em: EntityManager,
  workspaceId: string,
  agentId: string,
  requestedFrom: string | undefined,
): Promise<{ agent: Agent; from: string } | AgentRefusal> {
  const agent = await em.findOne(Agent, { id: agentId, workspace: workspaceId, deletedAt: null });
  if (!agent) return { code: 'agent_missing' };
  if (agent.status !== 'published') return { code: 'agent_not_published' };
  const from = await numberToCallFrom(em, agent, requestedFrom);
  if (typeof from !== 'string') return from;
  return { agent, from };
}

/**
 * The caller id: `from` when it is one of the agent's numbers, else the agent's only number.
 * An agent without numbers cannot call at all, whatever `from` says.
 */
async function numberToCallFrom(
  em: EntityManager,
  agent: Agent,
  from: string | undefined,
): Promise<string | AgentRefusal> {
  const numbers = await em.find(
    PhoneNumber,
    { workspace: agent.workspace, agent: agent.id, status: 'active' },
    { orderBy: { createdAt: 'asc' } },
  );
  if (numbers.length === 0) return { code: 'agent_has_no_number' };
  if (from !== undefined) {
    return numbers.some((number) => number.number === from) ? from : { code: 'from_number_not_assigned' };
  }
  if (numbers.length > 1) return { code: 'from_number_required' };
  return numbers[0].number;
}
