import type { Logger } from '../lib/logger.js';
import { recordingFailures } from '../lib/metrics/service-metrics.js';
import { type RecordingFiles, RecordingWriter } from '../lib/recordings/recording-writer.js';

// The media gateway's side of a call's recording (lib/recordings/recording-writer.ts writes it).

/**
 * The call's recording, or none when the disk will not take it (telephony spec section 4): a disk
 * that fails ends the recording, never the call. Each failure is a log line and
 * `recording_failures_total`; the call goes on.
 */
export async function openRecording(
  dir: string,
  callId: string,
  logger: Logger,
  files?: RecordingFiles,
): Promise<RecordingWriter | null> {
  try {
    return await RecordingWriter.open(dir, callId, {
      ...(files ? { files } : {}),
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
}
