import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { DashboardCredential, DashboardInvite, User } from '../../db/entities/index.js';
import { OperatorError } from '../accounts.js';
import { isUuid } from '../uuid.js';
import { endSessionsOf } from './end-sessions.js';
import { hashPassword, passwordProblem } from './passwords.js';
import { hashToken, randomToken } from './tokens.js';

// Invites (operations contract, section 8): `admin user invite --id ID` makes a one-time link
// where the person sets their password; the dashboard then signs them in.

export const DEFAULT_INVITE_HOURS = 72;
const MAX_INVITE_HOURS = 24 * 30;

/** The link's path: the token is in the fragment, so it never reaches a server log or a Referer. */
export function inviteUrl(dashboardUrl: string, token: string): string {
  return `${dashboardUrl.replace(/\/$/, '')}/invite#token=${token}`;
}

export async function createInvite(
  em: EntityManager,
  input: { userId: string; expiresInHours?: number },
): Promise<{ token: string; user: User; expiresAt: Date }> {
  const hours = input.expiresInHours ?? DEFAULT_INVITE_HOURS;
  if (!Number.isFinite(hours) || hours <= 0 || hours > MAX_INVITE_HOURS) {
    throw new OperatorError(`expires-in-hours must be a number above 0 and at most ${MAX_INVITE_HOURS}`);
  }
  const user = isUuid(input.userId) ? await em.findOne(User, { id: input.userId }) : null;
  if (!user) throw new OperatorError(`no user with id ${input.userId}`);
  const token = randomToken();
  const expiresAt = new Date(Date.now() + hours * 3_600_000);
  em.create(DashboardInvite, { id: randomUUID(), user: user.id, tokenHash: hashToken(token), expiresAt });
  await em.flush();
  return { token, user, expiresAt };
}

export type InviteRefusal = 'invite_invalid' | 'password_invalid';

/**
 * Uses an invite: sets the person's password (for every workspace of that email), marks the invite
 * used and ends every dashboard session the person has, in one transaction, so a link works
 * exactly once and a session stolen before the reset does not outlive it (the caller then starts
 * the one new session). The token is looked up before any argon2 work: a wrong or used token costs
 * one indexed read, not a hash. `hash` is the password hash (tests count its calls).
 */
export async function acceptInvite(
  em: EntityManager,
  input: { token: string; password: string },
  hash: (password: string) => Promise<string> = hashPassword,
): Promise<{ ok: true; user: User } | { ok: false; refusal: InviteRefusal; message: string }> {
  const problem = passwordProblem(input.password);
  if (problem) return { ok: false, refusal: 'password_invalid', message: problem };
  return em.transactional(async (tx) => {
    const invite = await tx.findOne(
      DashboardInvite,
      { tokenHash: hashToken(input.token) },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!invite || invite.usedAt || invite.expiresAt.getTime() <= Date.now()) {
      return {
        ok: false as const,
        refusal: 'invite_invalid' as const,
        message: 'This invite link is not valid: it was used already or has expired. Ask for a new one.',
      };
    }
    const passwordHash = await hash(input.password);
    const user = await tx.findOneOrFail(User, { id: invite.user });
    invite.usedAt = new Date();
    const credential = await tx.findOne(DashboardCredential, { email: user.email });
    if (credential) credential.passwordHash = passwordHash;
    else tx.create(DashboardCredential, { email: user.email, passwordHash });
    await tx.flush();
    await endSessionsOf(tx, user.email);
    return { ok: true as const, user };
  });
}
