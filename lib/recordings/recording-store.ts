import type { Readable } from 'node:stream';

// Where finished recordings are kept and read (telephony spec section 4): RECORDINGS_STORE `file`
// (RECORDINGS_DIR, the default) or `s3` (an S3-compatible object store). The media gateway always
// writes a call's recording to RECORDINGS_DIR while the call runs (lib/recordings/recording-writer.ts);
// `keep` then makes it the store's: a no-op for `file`, an upload (and the local copy removed once
// it is confirmed) for `s3`. Everything else (the API's GET and DELETE, `has_recording`, retention)
// reads the store only, so with `s3` API and gateways share nothing but it.

/**
 * A recording opened for reading: `size` bytes as of opening. A DELETE while it is sent does not
 * change what was already started.
 */
export interface RecordingReader {
  size: number;
  /**
   * Bytes `start` to `end` inclusive; null when the recording went away since it was opened
   * (deleted by a request or by retention), so the caller can still answer 404.
   */
  stream(range?: { start: number; end: number }): Promise<Readable | null>;
  /** Lets go without streaming (a refused range). */
  close(): Promise<void>;
}

export interface RecordingStore {
  /** `file` or `s3`: for logs and the docs' words, never a secret. */
  readonly kind: 'file' | 's3';
  /** Whether the call has a recording in the store (`has_recording`). */
  has(callId: string): Promise<boolean>;
  /** Opens the call's recording; null when it has none. */
  open(callId: string): Promise<RecordingReader | null>;
  /** Removes the recording; false when there was none. */
  delete(callId: string): Promise<boolean>;
  /** The ids of every call with a recording in the store (retention goes through them). */
  callIds(): Promise<string[]>;
  /**
   * Makes the finished local file `localFile` the call's recording in the store. Rejects when the
   * store did not take it (the local file is left for a later try); idempotent.
   */
  keep(callId: string, localFile: string): Promise<void>;
}

/** RECORDINGS_S3_*: the store of RECORDINGS_STORE=s3. The keys are secrets: never logged or shown. */
export interface S3StoreSettings {
  /** RECORDINGS_S3_ENDPOINT; unset: AWS S3 itself. */
  endpoint: string | undefined;
  bucket: string;
  /** RECORDINGS_S3_REGION, default us-east-1. */
  region: string;
  /** Both unset: the SDK's own credential chain (an instance role, AWS_* variables). */
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
}

/**
 * Whether the call has a recording, for `has_recording`; null when the store could not be asked (an
 * S3 store that is down): the call is still shown, and its events still written, without waiting
 * for the store.
 */
export async function hasRecordingIfKnown(
  store: Pick<RecordingStore, 'has'>,
  callId: string,
): Promise<boolean | null> {
  try {
    return await store.has(callId);
  } catch {
    return null;
  }
}
