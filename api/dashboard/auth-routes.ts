import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { DashboardCredential, User, Workspace } from '../../db/entities/index.js';
import { acceptInvite } from '../../lib/dashboard/invites.js';
import { decoyPasswordHash, PASSWORD_MAX_LENGTH, passwordMatches } from '../../lib/dashboard/passwords.js';
import {
  type ApiError,
  csrfTokenInvalid,
  inviteRateLimited,
  parameterInvalid,
  sessionMissing,
  signInFailed,
  signInRateLimited,
  unprocessable,
} from '../http/errors.js';
import { parseJsonObject, readRawBody } from '../http/request-body.js';
import type { ApiState } from '../http/route.js';
import { compileBodyValidator } from '../http/validation.js';
import { csrfTokenMatches, type SessionStore, sessionToken, setSessionCookie } from './sessions.js';
import type { SignInLimiter } from './sign-in-limiter.js';

// Sign-in, invites, the session and the workspace picker: the dashboard endpoints that come before
// a workspace is chosen, so they are not /v1-style routes. Refusals are ApiErrors like the API's.

export const AUTH_PREFIX = '/dashboard/auth';

type Ctx = Context & { state: ApiState };

const signInBody = compileBodyValidator({
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password'],
  properties: {
    email: { type: 'string', minLength: 1, maxLength: 320 },
    password: { type: 'string', minLength: 1, maxLength: PASSWORD_MAX_LENGTH },
  },
});
const inviteBody = compileBodyValidator({
  type: 'object',
  additionalProperties: false,
  required: ['token', 'password'],
  properties: {
    token: { type: 'string', minLength: 1, maxLength: 100 },
    password: { type: 'string', minLength: 1, maxLength: PASSWORD_MAX_LENGTH },
  },
});
const pickBody = compileBodyValidator({
  type: 'object',
  additionalProperties: false,
  required: ['user_id'],
  properties: { user_id: { type: 'string', format: 'uuid' } },
});

function clientAddress(ctx: Ctx): string {
  return ctx.ip || ctx.request.socket.remoteAddress || 'unknown';
}

async function bodyOf<T>(ctx: Ctx, validate: (data: unknown) => ApiError | null): Promise<T> {
  const body = parseJsonObject(await readRawBody(ctx)) ?? {};
  const error = validate(body);
  if (error) throw error;
  return body as T;
}

export interface AuthRouteDeps {
  sessions: SessionStore;
  limiter: SignInLimiter;
  /** Whether the dashboard is served over HTTPS (the cookie is then Secure). */
  secureCookies: (ctx: Context) => boolean;
}

export function authRoutes(deps: AuthRouteDeps): Middleware {
  const router = new Router<ApiState>({ prefix: AUTH_PREFIX, strict: true, sensitive: true });

  router.post('/sign-in', async (ctx) => {
    const { email, password } = await bodyOf<{ email: string; password: string }>(ctx, signInBody);
    const normalized = email.trim().toLowerCase();
    const decision = await deps.limiter.take({ email: normalized, address: clientAddress(ctx) });
    if (!decision.allowed) throw signInRateLimited(decision.retryAfterSeconds);
    const credential = await ctx.state.em.findOne(DashboardCredential, { email: normalized });
    // The same argon2 work whether or not the account exists.
    const matches = await passwordMatches(credential?.passwordHash ?? (await decoyPasswordHash()), password);
    if (!credential || !matches) throw signInFailed();
    const members = await ctx.state.em.find(User, { email: normalized });
    if (members.length === 0) throw signInFailed();
    await startSession(ctx, normalized, members.length === 1 ? members[0]!.id : null);
    ctx.body = { signed_in: true, workspace_selected: members.length === 1 };
  });

  router.post('/invite', async (ctx) => {
    const { token, password } = await bodyOf<{ token: string; password: string }>(ctx, inviteBody);
    const decision = await deps.limiter.takeInvite({ address: clientAddress(ctx) });
    if (!decision.allowed) throw inviteRateLimited(decision.retryAfterSeconds);
    const result = await acceptInvite(ctx.state.em, { token, password });
    if (!result.ok) {
      if (result.refusal === 'password_invalid') throw parameterInvalid('password', result.message);
      throw unprocessable('invite_invalid', result.message, { param: 'token' });
    }
    await startSession(ctx, result.user.email, result.user.id);
    ctx.body = { signed_in: true, workspace_selected: true };
  });

  router.get('/session', async (ctx) => {
    const session = await liveSession(ctx);
    const members = await ctx.state.em.find(
      User,
      { email: session.email },
      { orderBy: { createdAt: 'asc' } },
    );
    const workspaces = await ctx.state.em.find(Workspace, { id: { $in: members.map((m) => m.workspace) } });
    const nameOf = new Map(workspaces.map((w) => [w.id, w.name]));
    ctx.body = {
      email: session.email,
      csrf_token: session.csrfToken,
      member: session.member
        ? {
            user_id: session.member.userId,
            workspace_id: session.member.workspaceId,
            workspace_name: nameOf.get(session.member.workspaceId) ?? null,
            role: session.member.role,
          }
        : null,
      // Where the call page links each call's workflow (npm start passes its Web UI's address).
      temporal_ui_url: process.env.TEMPORAL_UI_URL ?? null,
      temporal_namespace: ctx.state.deps.settings.temporalNamespace,
      workspaces: members.map((m) => ({
        user_id: m.id,
        workspace_id: m.workspace,
        workspace_name: nameOf.get(m.workspace) ?? null,
        role: m.role,
      })),
    };
  });

  router.post('/workspace', async (ctx) => {
    const session = await liveSession(ctx, { csrf: true });
    const { user_id } = await bodyOf<{ user_id: string }>(ctx, pickBody);
    const member = await ctx.state.em.findOne(User, { id: user_id, email: session.email });
    if (!member) throw parameterInvalid('user_id', 'You have no role in that workspace.');
    await deps.sessions.pickMember(session.sessionId, member.id);
    ctx.body = { workspace_selected: true };
  });

  router.post('/sign-out', async (ctx) => {
    const session = await liveSession(ctx, { csrf: true });
    await deps.sessions.end(session.sessionId);
    setSessionCookie(ctx, null, deps.secureCookies(ctx));
    ctx.body = { signed_in: false };
  });

  /** The session of this request; sign-out and picking need its CSRF token like every change. */
  async function liveSession(ctx: Ctx, options: { csrf?: boolean } = {}) {
    const session = await deps.sessions.find(sessionToken(ctx));
    if (!session) throw sessionMissing();
    if (options.csrf && !csrfTokenMatches(ctx.get('X-CSRF-Token'), session.csrfToken))
      throw csrfTokenInvalid();
    return session;
  }

  async function startSession(ctx: Ctx, email: string, userId: string | null) {
    const previous = sessionToken(ctx);
    if (previous) {
      const old = await deps.sessions.find(previous);
      if (old) await deps.sessions.end(old.sessionId);
    }
    const { token } = await deps.sessions.create(email, userId);
    setSessionCookie(ctx, token, deps.secureCookies(ctx));
  }

  const routes = router.routes() as unknown as Middleware;
  return routes;
}
