import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { DashboardSession, type UserRole } from '../../db/entities/index.js';
import type { Orm } from '../../db/orm.js';
import { hashToken, randomToken } from '../../lib/dashboard/tokens.js';
import { sameSecret } from '../../lib/same-secret.js';

// Dashboard sessions, stored in PostgreSQL (dashboard_sessions) so every API process knows them
// and sign-out is immediate everywhere. The cookie holds a random token; only its SHA-256 is
// stored. A session ends after IDLE_TIMEOUT_MS without a request, ABSOLUTE_TIMEOUT_MS after
// sign-in whatever happens, or at sign-out.

export const SESSION_COOKIE = 'va_session';
export const IDLE_TIMEOUT_MS = 30 * 60_000;
export const ABSOLUTE_TIMEOUT_MS = 12 * 3_600_000;
/** lastSeenAt is written at most this often, so reads do not each cost a write. */
const TOUCH_INTERVAL_MS = 60_000;

export interface SessionInfo {
  sessionId: string;
  email: string;
  csrfToken: string;
  /** The picked workspace membership; null until a person with several picks one. */
  member: { userId: string; workspaceId: string; role: UserRole; requestsPerSecond: number } | null;
}

interface SessionRow {
  id: string;
  email: string;
  csrf_token: string;
  last_seen_at: string | Date;
  expires_at: string | Date;
  ended_at: string | Date | null;
  user_id: string | null;
  workspace_id: string | null;
  role: UserRole | null;
  requests_per_second: number | null;
}

const LOOKUP_SQL = `
  select s.id, s.email, s.csrf_token, s.last_seen_at, s.expires_at, s.ended_at, s.user_id,
         u.workspace_id, u.role, w.requests_per_second
    from dashboard_sessions s
    left join users u on u.id = s.user_id
    left join workspaces w on w.id = u.workspace_id
   where s.token_hash = ?`;

export class SessionStore {
  constructor(
    private readonly orm: Orm,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new session for `email`, in `userId`'s workspace when given. Returns the cookie's token. */
  async create(email: string, userId: string | null): Promise<{ token: string }> {
    const token = randomToken();
    const now = new Date(this.now());
    const em = this.orm.em.fork();
    em.create(DashboardSession, {
      id: randomUUID(),
      tokenHash: hashToken(token),
      email,
      user: userId,
      csrfToken: randomToken(),
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + ABSOLUTE_TIMEOUT_MS),
    });
    await em.flush();
    return { token };
  }

  /**
   * The live session behind a cookie token, or null (unknown, signed out, idle or past its end).
   * A request counts as activity (`touch`); a long-lived stream re-checking its session does not,
   * so an open live view does not keep an idle session alive.
   */
  async find(token: string | undefined, options: { touch?: boolean } = {}): Promise<SessionInfo | null> {
    if (!token || token.length > 100) return null;
    const rows = await this.orm.em
      .getConnection()
      .execute<SessionRow[]>(LOOKUP_SQL, [hashToken(token)], 'all');
    const row = rows[0];
    if (!row || row.ended_at !== null) return null;
    const now = this.now();
    const lastSeen = new Date(row.last_seen_at).getTime();
    if (new Date(row.expires_at).getTime() <= now || lastSeen + IDLE_TIMEOUT_MS <= now) return null;
    if ((options.touch ?? true) && now - lastSeen >= TOUCH_INTERVAL_MS) {
      await this.orm.em
        .getConnection()
        .execute(
          'update dashboard_sessions set last_seen_at = ? where id = ?',
          [new Date(now), row.id],
          'run',
        );
    }
    return {
      sessionId: row.id,
      email: row.email,
      csrfToken: row.csrf_token,
      member:
        row.user_id && row.workspace_id && row.role
          ? {
              userId: row.user_id,
              workspaceId: row.workspace_id,
              role: row.role,
              requestsPerSecond: row.requests_per_second ?? 0,
            }
          : null,
    };
  }

  /**
   * Whether the session behind `token` is still `sessionId`, in `workspaceId` (not signed out,
   * expired or moved to another workspace): what a long-lived view (the live call stream, a Talk
   * socket) checks again while it is open. Not touched: an open view keeps no idle session alive.
   */
  async stillHolds(token: string | undefined, sessionId: string, workspaceId: string): Promise<boolean> {
    const session = await this.find(token, { touch: false });
    return session?.sessionId === sessionId && session.member?.workspaceId === workspaceId;
  }

  async pickMember(sessionId: string, userId: string): Promise<void> {
    await this.orm.em
      .getConnection()
      .execute('update dashboard_sessions set user_id = ? where id = ?', [userId, sessionId], 'run');
  }

  async end(sessionId: string): Promise<void> {
    await this.orm.em
      .getConnection()
      .execute(
        'update dashboard_sessions set ended_at = ? where id = ? and ended_at is null',
        [new Date(this.now()), sessionId],
        'run',
      );
  }
}

export function sessionToken(ctx: Context): string | undefined {
  return ctx.cookies.get(SESSION_COOKIE) || undefined;
}

/**
 * Set-Cookie for the session: HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site
 * POSTs), Secure when the dashboard is served over HTTPS. Written by hand because Koa's cookies
 * refuse Secure when TLS ends at a proxy in front of us.
 */
export function setSessionCookie(ctx: Context, token: string | null, secure: boolean): void {
  const parts = [
    `${SESSION_COOKIE}=${token ?? ''}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    token ? `Max-Age=${Math.floor(ABSOLUTE_TIMEOUT_MS / 1000)}` : 'Max-Age=0',
  ];
  if (secure) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
}

/** The CSRF header against the session's token, in constant time. */
export function csrfTokenMatches(sent: string, expected: string): boolean {
  return sameSecret(sent, expected);
}
