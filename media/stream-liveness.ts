// Whether a Media Streams client is still there (telephony spec section 3). Two signs of life:
// the socket answers the gateway's WebSocket pings (one every `pingEveryMs`; a ping unanswered by
// the next is a half-open connection, and the socket is ended), and, once its call is taken, the
// client sends media (a 20 ms frame every 20 ms, silence included): none for `idleTimeoutMs` is
// the caller gone. Either way the socket's close ends the call as the caller's hang-up.

/** The part of a `ws` socket this needs. */
export interface LivenessSocket {
  ping(): void;
  terminate(): void;
  on(event: 'pong', listener: () => void): unknown;
}

export const PING_EVERY_MS = 5_000;

export interface StreamLiveness {
  /** From now on the client must send media (its call is taken). */
  expectMedia(): void;
  /** A media frame came. */
  heard(): void;
  stop(): void;
}

export function watchLiveness(
  socket: LivenessSocket,
  options: { idleTimeoutMs: number; pingEveryMs?: number; onIdle: () => void },
): StreamLiveness {
  let answered = true;
  socket.on('pong', () => {
    answered = true;
  });
  const pinger = setInterval(() => {
    if (!answered) {
      clearInterval(pinger);
      socket.terminate();
      return;
    }
    answered = false;
    socket.ping();
  }, options.pingEveryMs ?? PING_EVERY_MS);
  // A frame every 20 ms sets a time; one timer re-arms itself for what is left of the window.
  let idle: NodeJS.Timeout | undefined;
  let lastHeard = 0;
  const checkIdle = () => {
    const left = lastHeard + options.idleTimeoutMs - Date.now();
    if (left > 0) idle = setTimeout(checkIdle, left);
    else options.onIdle();
  };
  return {
    expectMedia() {
      lastHeard = Date.now();
      clearTimeout(idle);
      idle = setTimeout(checkIdle, options.idleTimeoutMs);
    },
    heard() {
      lastHeard = Date.now();
    },
    stop() {
      clearInterval(pinger);
      clearTimeout(idle);
    },
  };
}
