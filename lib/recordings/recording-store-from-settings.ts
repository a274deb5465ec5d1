import type { Settings } from '../settings.js';
import { FileRecordingStore } from './recording-files.js';
import type { RecordingStore } from './recording-store.js';
import { S3RecordingStore } from './s3-recording-store.js';

type StoreSettings = Pick<Settings, 'recordingsDir' | 'recordingsStore'>;

const s3Stores = new WeakMap<object, S3RecordingStore>();

/**
 * The store RECORDINGS_STORE names: RECORDINGS_DIR itself, or the S3-compatible store of
 * RECORDINGS_S3_*. One S3 store per settings, so a process keeps one client (and its connections).
 */
export function recordingStoreFor(settings: StoreSettings): RecordingStore {
  const kind = settings.recordingsStore;
  if (kind.kind === 'file') return new FileRecordingStore(settings.recordingsDir);
  let store = s3Stores.get(kind);
  if (!store) {
    store = new S3RecordingStore(kind);
    s3Stores.set(kind, store);
  }
  return store;
}
