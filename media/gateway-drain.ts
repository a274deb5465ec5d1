import type { CallSessions } from './call-sessions.js';

// A gateway's drain (telephony spec section 5): told to stop (SIGTERM), it takes no new streams
// (a new socket is closed with 1013, "try again later", and /readyz answers 503, so a balancer
// sends callers elsewhere), lets its live calls finish, and exits when they are over or after
// MEDIA_DRAIN_SECONDS, whichever comes first (media/main.ts).

/** How often a draining gateway looks whether its last call is over. */
const IDLE_POLL_MS = 250;

/** The close code of a stream refused while draining: RFC 6455's "try again later". */
export const DRAINING_CLOSE_CODE = 1013;
export const DRAINING_CLOSE_REASON = 'draining: try again later (another gateway)';

export class GatewayDrain {
  private since: number | null = null;

  get draining(): boolean {
    return this.since !== null;
  }

  /** From now on no new stream is taken. */
  begin(): void {
    this.since ??= Date.now();
  }

  /** `idle` once `sessions` holds no call, `timed_out` after `maxMs` with calls still live. */
  async untilIdle(sessions: Pick<CallSessions, 'live'>, maxMs: number): Promise<'idle' | 'timed_out'> {
    const deadline = Date.now() + maxMs;
    while (sessions.live > 0) {
      if (Date.now() >= deadline) return 'timed_out';
      await new Promise((resolve) => setTimeout(resolve, Math.min(IDLE_POLL_MS, deadline - Date.now())));
    }
    return 'idle';
  }
}
