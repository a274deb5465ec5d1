// The media session of a call with audio: the `holdMedia` activity the call workflow runs on the
// task queue of the media gateway that holds the call's audio (workflows/call/media-session.ts,
// media/media-session-worker.ts). It returns when the call's audio ends and heartbeats until then,
// so the workflow learns that the gateway died from the missing heartbeats.

export interface MediaSessionActivities {
  /** Held while the call's audio lasts; resolves when it ends (the caller hung up, or the gateway closed the stream). */
  holdMedia(input: { callId: string }): Promise<void>;
}

/** The task queue of the media gateway reachable at `controlUrl`: one per gateway process. */
export function mediaTaskQueue(taskQueuePrefix: string, controlUrl: string): string {
  return `${taskQueuePrefix}media@${new URL(controlUrl).host}`;
}
