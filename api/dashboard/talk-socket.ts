import type { Middleware } from 'koa';
import { WebSocketServer } from 'ws';
import { Call } from '../../db/entities/index.js';
import { isUuid } from '../../lib/uuid.js';
import { ApiError, parameterInvalid, resourceMissing, unprocessable } from '../http/errors.js';
import type { ApiContext, ApiState, RouteDefinition } from '../http/route.js';
import { authenticate, authorize, type RouterServices } from '../http/router.js';
import { isUpgradeRequest, takeUpgrade } from '../http/websocket-upgrade.js';
import { SESSION_RECHECK_MS } from './call-events.js';
import { sessionToken } from './sessions.js';
import { talkGateway } from './talk-gateway.js';
import { hangUpTalkCall } from './talk-hang-up.js';
import { TalkRelay } from './talk-relay.js';

// GET /dashboard/api/test-calls/{call_id}/talk, upgraded to a WebSocket: the test panel's
// microphone (spec voice-media-v1 section 7). The page speaks Media Streams on it and the API
// relays it to the media gateway (talk-relay.ts), so the browser needs one origin only and never
// sees a token (the relay adds the call's own stream token). The upgrade is checked exactly as the
// dashboard's API checks a request: the session cookie (none or ended: 401 session_missing), the person's current role with the
// scope of starting a test call (calls:write: a viewer gets 403 role_required), the call in the
// picked workspace. A browser always sends Origin on a WebSocket, and cookies go with it: a page of
// another origin is refused (403 origin_invalid), which the CSRF header does for other requests.
// The socket lives as long as the session: it is looked up again every SESSION_RECHECK_MS.

const PATH = /^\/dashboard\/api\/test-calls\/([^/]+)\/talk$/;
/** What the route pipeline checks for this upgrade, as if it were a route: what starting a test call needs. */
const START_TEST_CALL = { scope: 'calls:write' } as RouteDefinition;
/** A call that is over takes no stream (one that already has its stream is refused by the gateway, 1008). */
const LIVE_STATUSES = ['ringing', 'in_progress'];
const MAX_MESSAGE_BYTES = 64 * 1024;

const originInvalid = () =>
  new ApiError(403, 'permission_error', 'origin_invalid', 'Talk is only for the dashboard’s own pages.', {
    param: 'Origin',
  });

/** Relays open in this process, closed when the API stops. */
export class TalkRelays {
  private readonly open = new Set<TalkRelay>();

  add(relay: TalkRelay): void {
    this.open.add(relay);
    void relay.done.then(() => this.open.delete(relay));
  }

  async closeAll(): Promise<void> {
    const all = [...this.open];
    for (const relay of all) relay.close();
    await Promise.all(all.map((relay) => relay.done));
  }
}

export function talkSockets(
  services: RouterServices,
  relays: TalkRelays,
  options: { dashboardOrigin: string | null },
): Middleware<ApiState> {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  return async (ctx, next) => {
    const match = PATH.exec(ctx.path);
    if (!match || ctx.method !== 'GET' || !isUpgradeRequest(ctx.req)) return next();
    const apiCtx = ctx as unknown as ApiContext;
    await authenticate(apiCtx, services, 'session');
    authorize(apiCtx, START_TEST_CALL);
    const origin = ctx.get('Origin');
    const expected = options.dashboardOrigin ?? `${ctx.protocol}://${ctx.host}`;
    if (origin && origin !== expected) throw originInvalid();
    const callId = match[1]!;
    if (!isUuid(callId)) throw parameterInvalid('call_id', 'call_id must be a UUID.');
    const { em, auth, deps } = ctx.state;
    const call = await em.findOne(Call, { id: callId, workspace: auth.workspaceId, browserFarEnd: true });
    if (!call?.mediaGateway) throw resourceMissing('talk call', 'call_id');
    if (!LIVE_STATUSES.includes(call.status)) {
      throw unprocessable('call_ended', 'The call has ended.', { param: 'call_id', storable: false });
    }
    const gateway = talkGateway(deps.settings);
    if (!gateway.available) throw unprocessable('talk_unavailable', gateway.reason, { storable: false });

    const token = sessionToken(ctx);
    const upgrade = takeUpgrade(ctx.req)!;
    ctx.respond = false;
    // Not awaited: a handshake ws refuses (a bad key) is answered by ws and never calls back.
    sockets.handleUpgrade(ctx.req, upgrade.socket, upgrade.head, (browser) => {
      // The gateway the call was pinned to when it was started (the same one unless settings changed).
      const relay = new TalkRelay({
        browser,
        streamsUrl: gateway.streamsUrlOf(call.mediaGateway!),
        token: gateway.streamTokenFor(callId),
        callId,
        logger: ctx.state.logger,
        hangUpUnstarted: async () => hangUpTalkCall(await deps.temporal(), call),
      });
      relays.add(relay);
      watchSession(relay, () => services.sessions.stillHolds(token, auth.sessionId!, auth.workspaceId));
    });
  };
}

/** Closes the relay once its session was signed out, expired, or moved to another workspace. */
function watchSession(relay: TalkRelay, stillHolds: () => Promise<boolean>): void {
  const recheck = setInterval(async () => {
    // A database that does not answer is no reason to cut a call; an ended session is.
    const holds = await stillHolds().catch(() => true);
    if (!holds) relay.close(1008, 'session_ended');
  }, SESSION_RECHECK_MS);
  void relay.done.then(() => clearInterval(recheck));
}
