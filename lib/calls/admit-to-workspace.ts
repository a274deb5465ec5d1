import type { EntityManager } from '@mikro-orm/postgresql';
import { type CallDirection, Workspace } from '../../db/entities/index.js';
import { checkCallLimits, hasCallOnTheLine, type LimitRefusal, lockWorkspaceCalls } from './call-limits.js';

// The workspace's rules for a call, the one admission every call passes whichever way it comes:
// POST /calls and campaigns (admitOutboundCall), a call that comes in on a workspace number and a
// web call from the test panel or a widget (incoming-calls.ts). Which rules apply (docs/calls.md):
//
//   rule                                   outbound   inbound phone   web
//   calls_per_minute, calls_per_day        yes        no              no     (they pace dialing out)
//   minutes_quota                          yes        yes             yes    (every call's minutes count)
//   trial plan: one call at a time         yes        yes             yes
//
// It takes the workspace's advisory lock, so the caller inserts its call in the same transaction
// before any other admission of the workspace counts again.

export type WorkspaceRefusal = LimitRefusal | { code: 'trial_line_busy' };

/** The workspace's limits and plan, for a call of `direction`; null when the call may go ahead. */
export async function admitToWorkspace(
  em: EntityManager,
  workspaceId: string,
  direction: CallDirection,
  now: Date,
): Promise<WorkspaceRefusal | null> {
  await lockWorkspaceCalls(em, workspaceId);
  const workspace = await em.findOneOrFail(Workspace, { id: workspaceId });
  const limit = await checkCallLimits(em, workspace, direction, now);
  if (limit) return limit;
  if (workspace.plan === 'trial' && (await hasCallOnTheLine(em, workspaceId, now))) {
    return { code: 'trial_line_busy' };
  }
  return null;
}
