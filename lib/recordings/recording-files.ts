import { type FileHandle, open, readdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { isUuid } from '../uuid.js';
import type { RecordingReader, RecordingStore } from './recording-store.js';

// Where a call's recording lives on disk and how it is found, read and removed: `${dir}/${callId}.wav`,
// one file per call (RECORDINGS_DIR, docs/operations.md "Recordings"). With RECORDINGS_STORE=file
// (the default) the folder is the store (FileRecordingStore): the file's existence is the whole
// truth, a call's `has_recording` is true exactly while it exists. With `s3` it is the gateway's
// local copy while the call runs and until the upload is confirmed.

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
 * Opens the call's recording; null when it has none. The file is held open, so a DELETE (or a
 * recording still being written) while it is sent does not change what this reader sends.
 */
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
    async stream(range = { start: 0, end: size - 1 }) {
      // A file caught between its creation and its header has no bytes to send.
      if (size === 0) {
        await handle.close();
        return Readable.from([]);
      }
      return handle.createReadStream({ start: range.start, end: range.end, autoClose: true });
    },
    close: () => handle.close(),
  };
}

/** The calls with a recording in `dir` (`<call id>.wav`). */
export async function recordedCallIds(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
  return names
    .filter((name) => name.endsWith('.wav'))
    .map((name) => name.slice(0, -'.wav'.length))
    .filter(isUuid);
}

/** RECORDINGS_STORE=file: RECORDINGS_DIR is the store; what the gateway wrote there is kept as it is. */
export class FileRecordingStore implements RecordingStore {
  readonly kind = 'file';
  constructor(readonly dir: string) {}
  has(callId: string) {
    return hasRecording(this.dir, callId);
  }
  open(callId: string) {
    return openRecordingForRead(this.dir, callId);
  }
  delete(callId: string) {
    return deleteRecording(this.dir, callId);
  }
  callIds() {
    return recordedCallIds(this.dir);
  }
  async keep(): Promise<void> {}
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException)?.code === 'ENOENT';
}
