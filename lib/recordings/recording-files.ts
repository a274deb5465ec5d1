import { type FileHandle, open, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { isUuid } from '../uuid.js';

// Where a call's recording lives and how it is found, read and removed: `${dir}/${callId}.wav`,
// one file per call (RECORDINGS_DIR, docs/operations.md "Recordings"). The file's existence is the
// whole truth: a call's `has_recording` is true exactly while it exists.

/** The recording's file. Only a UUID becomes a path, so no call id can reach outside `dir`. */
export function recordingPath(dir: string, callId: string): string {
  if (!isUuid(callId)) throw new Error(`not a call id: ${JSON.stringify(callId)}`);
  return path.join(dir, `${callId.toLowerCase()}.wav`);
}

export async function hasRecording(dir: string, callId: string): Promise<boolean> {
  try {
    return (await stat(recordingPath(dir, callId))).isFile();
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
}

/** Removes the recording; false when there was none. */
export async function deleteRecording(dir: string, callId: string): Promise<boolean> {
  try {
    await unlink(recordingPath(dir, callId));
    return true;
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
}

/**
 * A recording opened for reading. The file is held open, so a DELETE (or a recording still being
 * written) while it is sent does not change what this reader sends: `size` bytes as of opening.
 */
export interface RecordingReader {
  size: number;
  /** Bytes `start` to `end` inclusive, streamed; the file is closed when the stream ends or is destroyed. */
  stream(range?: { start: number; end: number }): Readable;
  /** Closes the file without streaming (a refused range). */
  close(): Promise<void>;
}

/** Opens the call's recording; null when it has none. */
export async function openRecordingForRead(dir: string, callId: string): Promise<RecordingReader | null> {
  let handle: FileHandle;
  try {
    handle = await open(recordingPath(dir, callId), 'r');
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
  const { size } = await handle.stat();
  return {
    size,
    stream(range = { start: 0, end: size - 1 }) {
      // A file caught between its creation and its header has no bytes to send.
      if (size === 0) {
        void handle.close();
        return Readable.from([]);
      }
      return handle.createReadStream({ start: range.start, end: range.end, autoClose: true });
    },
    close: () => handle.close(),
  };
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException)?.code === 'ENOENT';
}
