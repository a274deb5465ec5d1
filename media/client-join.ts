import type { GatewayMessage } from './stream-messages.js';

// A transfer's two legs joined by the client that carries both (telephony spec section 8): the SIP
// side placed the person's leg and holds the caller's call too, so it joins their RTP itself rather
// than having every frame cross to the gateway and back (media/transfer-legs.ts). A client that can
// names itself in its `start` (`join`: its process); the gateway asks only when the caller's and
// the leg's streams name the same one. It asks on the caller's stream (`bridge` with the leg's
// call id) and the client answers `bridged` with whether it joined them; joined, both streams are
// the gateway's no more.

/** How long the client has to answer `bridge` (it only takes the leg from its own goroutine). */
export const JOIN_ANSWER_WITHIN_MS = 5_000;

export class ClientJoin {
  /** The leg asked for, and what its answer does; one at a time. */
  private asked: { legId: string; answer: (joined: boolean) => void } | null = null;

  constructor(
    /** The client's process, from its `start` (`join`). */
    readonly joiner: string,
    private readonly send: (message: GatewayMessage) => void,
  ) {}

  /** Whether this client can join a leg whose stream came from `other`. */
  joins(other: ClientJoin | null): boolean {
    return other !== null && other.joiner === this.joiner;
  }

  /**
   * Asks the client to join leg `legId` to this call; `onJoined` runs as its `bridged` answer is
   * read, before any later message of the stream (its close), so the streams' ends are known to be
   * the transfer's. False when it did not, did not answer in time, or the stream closed first.
   */
  ask(legId: string, onJoined: () => void): Promise<boolean> {
    if (this.asked) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => this.answered(legId, false), JOIN_ANSWER_WITHIN_MS);
      this.asked = {
        legId,
        answer: (joined) => {
          clearTimeout(timer);
          this.asked = null;
          if (joined) onJoined();
          resolve(joined);
        },
      };
      this.send({ event: 'bridge', bridge: { callId: legId } });
    });
  }

  /** The client's `bridged` answer (an answer for another leg than the one asked is ignored). */
  answered(legId: string, joined: boolean): void {
    if (this.asked?.legId === legId) this.asked.answer(joined);
  }

  /** The stream closed: a question still open is answered no. */
  closed(): void {
    this.asked?.answer(false);
  }
}
