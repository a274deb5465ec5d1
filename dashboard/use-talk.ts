import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import { useResource } from './components.js';
import { type Microphone, openMicrophone, TalkConnection } from './talk.js';

// The test panel's Talk control as a hook: whether the server offers it (GET /dashboard/api/talk:
// a media gateway to stream to, else the reason), the microphone opened before the call is placed,
// the call's socket while it lasts, and what went wrong with it. Leaving the page closes the socket,
// which ends the call as the caller hanging up.

export interface TalkAvailability {
  available: boolean;
  reason: string | null;
}

export function useTalk() {
  const availability = useResource(() => api.get<TalkAvailability>('/dashboard/api/talk'), []);
  const [connection, setConnection] = useState<TalkConnection | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const live = useRef<TalkConnection | null>(null);
  useEffect(() => () => live.current?.hangUp(), []);

  /** Streams `mic` to the call; a socket refused before it opened hangs the call up through the API. */
  const connect = (callId: string, mic: Microphone) => {
    setProblem(null);
    const talk = new TalkConnection(callId, mic, {
      onClosed({ code, reason, opened }) {
        if (live.current === talk) live.current = null;
        setConnection((current) => (current === talk ? null : current));
        if (!opened) {
          setProblem('The microphone could not be connected to the call; the call was hung up.');
          void api.post(`/dashboard/api/test-calls/${callId}/hang-up`).catch(() => {});
        } else if (code !== 1000) {
          setProblem(`The call's audio stopped: ${reason || `code ${code}`}.`);
        }
      },
    });
    live.current = talk;
    setConnection(talk);
  };

  return {
    available: availability.data?.available ?? false,
    reason: availability.data?.reason ?? (availability.error ? 'Talk availability is unknown.' : null),
    active: connection !== null,
    problem,
    openMicrophone,
    connect,
    hangUp: () => connection?.hangUp(),
  };
}
