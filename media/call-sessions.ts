import type { CallAudio } from './call-audio.js';

// The calls whose audio this gateway holds, by call id. A command of the call workflow's carrier
// can come a moment before its stream is registered (the workflow starts while the gateway still
// sets the call up), so a lookup waits a little for a call about to arrive.

/** How long a command waits for its call's stream to be registered. */
const ARRIVAL_WAIT_MS = 5000;

export class CallSessions {
  private readonly sessions = new Map<string, CallAudio>();
  private readonly waiting = new Map<string, ((session: CallAudio) => void)[]>();
  /** Calls a stream has claimed whose audio is still being opened. */
  private readonly claimed = new Set<string>();
  /** Sessions not over, or over with signals still on their way to the workflow. */
  private readonly unsettled = new Set<CallAudio>();

  get size(): number {
    return this.sessions.size;
  }

  /**
   * Calls held here: those whose audio is still being opened, and those whose workflow has not
   * been told all yet (a hung-up call's audio is released at once; its last signals may wait).
   */
  get live(): number {
    return this.claimed.size + this.unsettled.size;
  }

  /**
   * One stream per call: claims `callId` for the stream about to open its audio, at once (no await
   * between the check and the claim, so two streams racing for one call cannot both pass); null
   * when the call already has a stream or one is opening. The claim ends with `add`, or with the
   * returned release when opening failed.
   */
  claim(callId: string): (() => void) | null {
    if (this.sessions.has(callId) || this.claimed.has(callId)) return null;
    this.claimed.add(callId);
    return () => {
      this.claimed.delete(callId);
    };
  }

  add(session: CallAudio): void {
    this.claimed.delete(session.callId);
    this.sessions.set(session.callId, session);
    for (const wake of this.waiting.get(session.callId) ?? []) wake(session);
    this.waiting.delete(session.callId);
    this.unsettled.add(session);
    void session.ended.then(() => {
      if (this.sessions.get(session.callId) === session) this.sessions.delete(session.callId);
    });
    void session.ended.then(() => session.told()).finally(() => this.unsettled.delete(session));
  }

  get(callId: string): CallAudio | undefined {
    return this.sessions.get(callId);
  }

  /** The call's session, waiting up to ARRIVAL_WAIT_MS for one about to be registered; undefined when none comes. */
  async arriving(callId: string, waitMs = ARRIVAL_WAIT_MS): Promise<CallAudio | undefined> {
    const known = this.sessions.get(callId);
    if (known || waitMs <= 0) return known;
    return new Promise((resolve) => {
      const wake = (session: CallAudio | undefined) => {
        clearTimeout(timer);
        resolve(session);
      };
      const timer = setTimeout(() => {
        const list = this.waiting.get(callId)?.filter((w) => w !== wake) ?? [];
        if (list.length) this.waiting.set(callId, list);
        else this.waiting.delete(callId);
        resolve(undefined);
      }, waitMs);
      this.waiting.set(callId, [...(this.waiting.get(callId) ?? []), wake]);
    });
  }

  all(): CallAudio[] {
    return [...this.sessions.values()];
  }
}
