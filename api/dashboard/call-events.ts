import { PassThrough } from 'node:stream';
import type { Context, Middleware } from 'koa';
import { Call, FINAL_CALL_STATUSES, TranscriptEntry } from '../../db/entities/index.js';
import { isUuid } from '../../lib/uuid.js';
import { parameterInvalid, resourceMissing, tooManyLiveViews } from '../http/errors.js';
import type { ApiContext, ApiState, RouteDefinition } from '../http/route.js';
import { authenticate, authorize, type RouterServices } from '../http/router.js';
import { sessionToken } from './sessions.js';

// GET /dashboard/api/calls/{call_id}/live: a call's transcript lines and status as server-sent
// events, as they are written (the test panel shows the agent's lines as they come; the call page
// follows a live call). The call workflow writes each line before playing it, so the transcript
// is the source; polled every POLL_MS, the stream ends once the call is final.
//
// A stream lives as long as its session does: every SESSION_RECHECK_MS it looks the session up
// again (without counting as activity) and ends with an `end` event once the session was signed
// out, expired, or no longer has the call's workspace picked. A session holds at most
// MAX_STREAMS_PER_SESSION open streams in this process; one more is 429 rate_limited.

const PATH = /^\/dashboard\/api\/calls\/([^/]+)\/live$/;
const POLL_MS = 300;
export const SESSION_RECHECK_MS = 2_000;
export const MAX_STREAMS_PER_SESSION = 4;
const FINAL = new Set<string>(FINAL_CALL_STATUSES);
/** What the route pipeline checks for this read, as if it were a route. */
const READ_CALLS = { scope: 'calls:read' } as RouteDefinition;

export function callEvents(services: RouterServices): Middleware<ApiState> {
  /** Open streams per session id, in this process. */
  const openStreams = new Map<string, number>();
  return async (ctx, next) => {
    const match = PATH.exec(ctx.path);
    if (!match || ctx.method !== 'GET') return next();
    const apiCtx = ctx as unknown as ApiContext;
    await authenticate(apiCtx, services, 'session');
    authorize(apiCtx, READ_CALLS);
    const callId = match[1]!;
    if (!isUuid(callId)) throw parameterInvalid('call_id', 'call_id must be a UUID.');
    const { em, auth } = ctx.state;
    if (!(await em.findOne(Call, { id: callId, workspace: auth.workspaceId }, { fields: ['id'] }))) {
      throw resourceMissing('call', 'call_id');
    }
    const sessionId = auth.sessionId!;
    const open = openStreams.get(sessionId) ?? 0;
    if (open >= MAX_STREAMS_PER_SESSION) throw tooManyLiveViews();
    openStreams.set(sessionId, open + 1);
    const release = () => {
      const left = (openStreams.get(sessionId) ?? 1) - 1;
      if (left > 0) openStreams.set(sessionId, left);
      else openStreams.delete(sessionId);
    };
    const token = sessionToken(ctx);
    const sessionStillHolds = () => services.sessions.stillHolds(token, sessionId, auth.workspaceId);
    stream(ctx, callId, sessionStillHolds, release);
  };
}

function stream(
  ctx: Context & { state: ApiState },
  callId: string,
  sessionStillHolds: () => Promise<boolean>,
  release: () => void,
) {
  const out = new PassThrough();
  ctx.req.setTimeout(0);
  ctx.status = 200;
  ctx.type = 'text/event-stream';
  ctx.set('Cache-Control', 'no-cache, no-transform');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.body = out;
  let closed = false;
  ctx.req.on('close', () => {
    closed = true;
  });
  const send = (event: string, data: unknown) =>
    out.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  const { orm, logger } = ctx.state.deps;
  void (async () => {
    let nextIndex = 0;
    let lastStatus = '';
    let sessionCheckedAt = Date.now();
    try {
      while (!closed) {
        if (Date.now() - sessionCheckedAt >= SESSION_RECHECK_MS) {
          sessionCheckedAt = Date.now();
          if (!(await sessionStillHolds())) {
            send('end', { reason: 'session_ended' });
            break;
          }
        }
        const em = orm.em.fork();
        const call = await em.findOne(Call, { id: callId });
        const lines = await em.find(
          TranscriptEntry,
          { call: callId, index: { $gte: nextIndex } },
          { orderBy: { index: 'asc' } },
        );
        for (const line of lines) {
          send('line', { index: line.index, role: line.role, text: line.text });
          nextIndex = line.index + 1;
        }
        const status = call ? `${call.status}/${call.endReason ?? ''}/${call.analysis ? 1 : 0}` : 'gone';
        if (status !== lastStatus) {
          lastStatus = status;
          send('status', {
            status: call?.status ?? null,
            end_reason: call?.endReason ?? null,
            has_analysis: Boolean(call?.analysis),
          });
        }
        if (!call || FINAL.has(call.status)) break;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    } catch (error) {
      logger.warn('call events stream stopped', { error, call_id: callId });
      send('error', { message: 'The live view stopped; reload the page.' });
    } finally {
      release();
      out.end();
    }
  })();
}
