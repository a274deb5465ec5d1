import type { Logger } from '../lib/logger.js';
import { recordingFailures } from '../lib/metrics/service-metrics.js';
import { type RecordingFiles, RecordingWriter } from '../lib/recordings/recording-writer.js';
import type { AgentCut } from './agent-speech.js';
import type { RecordingUploads } from './recording-uploads.js';

// The media gateway's side of a call's recording (lib/recordings/recording-writer.ts writes it;
// media/recording-uploads.ts takes it to RECORDINGS_STORE=s3 once it is closed).

/** What the call's audio does with its recording: the writer's calls, and a close that also keeps it. */
export type CallRecording = Pick<
  RecordingWriter,
  'caller' | 'agent' | 'truncateAgentAfter' | 'close' | 'stopped'
>;

/**
 * The call's recording, or none when the disk will not take it (telephony spec section 4): a disk
 * that fails ends the recording, never the call. Each failure is a log line and
 * `recording_failures_total`; the call goes on. With `uploads`, closing it also hands the file to
 * the store (awaited, so the media session ends with the recording kept; it never rejects).
 */
export async function openRecording(
  dir: string,
  callId: string,
  logger: Logger,
  options: { files?: RecordingFiles; uploads?: RecordingUploads } = {},
): Promise<CallRecording | null> {
  let writer: RecordingWriter;
  try {
    writer = await RecordingWriter.open(dir, callId, {
      ...(options.files ? { files: options.files } : {}),
      onFailure: (error) => {
        recordingFailures.inc({ stage: 'write' });
        logger.error('recording stopped: the disk failed; the call goes on without it', {
          error: `${error}`,
        });
      },
    });
  } catch (error) {
    recordingFailures.inc({ stage: 'open' });
    logger.error('recording not opened: the call goes on without one', { error: `${error}` });
    return null;
  }
  const { uploads } = options;
  if (!uploads?.uploading) return writer;
  let closed: Promise<void> | undefined;
  return {
    caller: (samples, atMs) => writer.caller(samples, atMs),
    agent: (samples, atMs) => writer.agent(samples, atMs),
    truncateAgentAfter: (atMs) => writer.truncateAgentAfter(atMs),
    get stopped() {
      return writer.stopped;
    },
    close() {
      closed ??= writer.close().then(async () => {
        await uploads.keep(callId);
      });
      return closed;
    },
  };
}

/**
 * An interruption's cut of the recording (interruptions.ts): the agent's channel ends where the
 * interrupted utterance stopped (agent-speech.ts), the moment the transcript's cut is taken at too.
 */
export function recordingCut(recording: CallRecording | null): (cut: AgentCut) => void {
  return (cut) => recording?.truncateAgentAfter(cut.speech?.interruptedAtMs ?? cut.atMs);
}
