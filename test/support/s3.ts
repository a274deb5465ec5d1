import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { S3StoreSettings } from '../../lib/recordings/recording-store.js';
import { S3RecordingStore } from '../../lib/recordings/s3-recording-store.js';
import { startS3Server } from '../../scripts/s3-server.js';

// A real S3-compatible store for a test file (versitygw, scripts/s3-server.ts): the one `npm test`
// started for the run (TEST_S3_ENDPOINT and its keys), else one of the file's own. Each call gets a
// bucket of its own, so files sharing the server never see each other's recordings.

export interface TestS3 {
  /** RECORDINGS_S3_* of a fresh bucket, as settings. */
  settings: S3StoreSettings;
  /** The store on that bucket. */
  store: S3RecordingStore;
  close(): Promise<void>;
}

export async function startTestS3(): Promise<TestS3> {
  let endpoint = process.env.TEST_S3_ENDPOINT;
  let keys = {
    accessKeyId: process.env.TEST_S3_ACCESS_KEY_ID,
    secretAccessKey: process.env.TEST_S3_SECRET_ACCESS_KEY,
  };
  let stopOwn = async () => {};
  if (!endpoint) {
    const dir = await mkdtemp(path.join(tmpdir(), 'test-s3-'));
    const server = await startS3Server({
      dataDir: path.join(dir, 'data'),
      logFile: path.join(dir, 's3.log'),
    });
    endpoint = server.endpoint;
    keys = {
      accessKeyId: server.env.RECORDINGS_S3_ACCESS_KEY_ID,
      secretAccessKey: server.env.RECORDINGS_S3_SECRET_ACCESS_KEY,
    };
    stopOwn = async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    };
  }
  const settings: S3StoreSettings = {
    endpoint,
    bucket: `test-${randomBytes(6).toString('hex')}`,
    region: 'us-east-1',
    ...keys,
  };
  const store = new S3RecordingStore(settings);
  await store.ensureBucket();
  return {
    settings,
    store,
    async close() {
      store.close();
      await stopOwn();
    },
  };
}
