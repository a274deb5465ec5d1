import type { EntityManager } from '@mikro-orm/postgresql';

// A person's dashboard sessions end when what they signed in with changes: a password set through
// an invite (a stolen session must not outlive the reset) and removal from a workspace. Run inside
// the transaction that makes the change, so no session survives a committed change.

/** Ends every live session of `email` (sessions are per person, across their workspaces). */
export async function endSessionsOf(em: EntityManager, email: string): Promise<number> {
  const result = await em.execute<{ affectedRows: number }>(
    'update dashboard_sessions set ended_at = ? where email = ? and ended_at is null',
    [new Date(), email.toLowerCase()],
    'run',
  );
  return result.affectedRows;
}
