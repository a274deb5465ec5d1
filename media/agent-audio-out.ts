// The agent's voice's way out to the client of one call (media/agent-voice.ts).

/** What the media gateway sends to the client. */
export interface AgentAudioOut {
  media(payload: Uint8Array): void;
  mark(name: string): void;
  clear(): void;
  /**
   * A key the agent pressed, as a typed event: only for a client that plays keys itself (the SIP
   * side, as RFC 4733 events; it says so with `keypad: rfc4733` in its `start`). Absent: keys are
   * in-band tones in the audio.
   */
  dtmf?(digit: string): void;
}
