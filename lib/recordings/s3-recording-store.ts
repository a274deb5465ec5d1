import { createReadStream } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  paginateListObjectsV2,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { isUuid } from '../uuid.js';
import type { RecordingReader, RecordingStore, S3StoreSettings } from './recording-store.js';

// RECORDINGS_STORE=s3 (telephony spec section 4): each call's recording is the object
// `<call id>.wav` in RECORDINGS_S3_BUCKET of an S3-compatible store (AWS S3, or the versitygw
// gateway the project's scripts run: scripts/s3-server.ts). Path-style addressing, so a store on
// `http://host:port` works without DNS names per bucket. The access keys go to the client only:
// no log line, error text or history carries them (the SDK's errors name the bucket and key).

/** One request's limits: a store that hangs fails the request (and the SDK retries it) instead. */
const CONNECT_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 60_000;

export class S3RecordingStore implements RecordingStore {
  readonly kind = 's3';
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(settings: S3StoreSettings) {
    this.bucket = settings.bucket;
    this.client = new S3Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint, forcePathStyle: true } : {}),
      ...(settings.accessKeyId && settings.secretAccessKey
        ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }
        : {}),
      requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
      maxAttempts: 3,
    });
  }

  async has(callId: string): Promise<boolean> {
    return (await this.head(callId)) !== null;
  }

  async open(callId: string): Promise<RecordingReader | null> {
    const size = await this.head(callId);
    if (size === null) return null;
    const key = objectKey(callId);
    return {
      size,
      stream: async (range = { start: 0, end: size - 1 }) => {
        if (size === 0) return Readable.from([]);
        try {
          const got = await this.client.send(
            new GetObjectCommand({
              Bucket: this.bucket,
              Key: key,
              Range: `bytes=${range.start}-${range.end}`,
            }),
          );
          return got.Body as Readable;
        } catch (error) {
          // Deleted (by a request or by retention) between the look and the read.
          if (isNotFound(error)) return null;
          throw error;
        }
      },
      close: async () => {},
    };
  }

  async delete(callId: string): Promise<boolean> {
    // S3 answers a DELETE of a missing key with 204 too: look first, for the API's 404.
    if ((await this.head(callId)) === null) return false;
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: objectKey(callId) }));
    return true;
  }

  async callIds(): Promise<string[]> {
    const ids: string[] = [];
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.bucket })) {
      for (const object of page.Contents ?? []) {
        const name = object.Key ?? '';
        if (!name.endsWith('.wav')) continue;
        const id = name.slice(0, -'.wav'.length);
        if (isUuid(id)) ids.push(id);
      }
    }
    return ids;
  }

  /** Uploads the finished file (in parts when large), checks the store holds all of it, then removes the local copy. */
  async keep(callId: string, localFile: string): Promise<void> {
    const { size } = await stat(localFile);
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: objectKey(callId),
        Body: createReadStream(localFile),
        ContentType: 'audio/wav',
        ContentLength: size,
      },
    });
    await upload.done();
    const stored = await this.head(callId);
    if (stored !== size) throw new Error(`the store holds ${stored} of the recording's ${size} bytes`);
    await unlink(localFile).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }

  /** Whether the bucket answers (the gateway's and the API's readiness, and the scripts' start). */
  async reachable(): Promise<boolean> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return true;
    } catch {
      return false;
    }
  }

  /** Creates the bucket when it is not there (the project's own store; a production bucket is the operator's). */
  async ensureBucket(): Promise<void> {
    if (await this.reachable()) return;
    await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
  }

  close(): void {
    this.client.destroy();
  }

  /** The object's size; null when there is none. */
  private async head(callId: string): Promise<number | null> {
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: objectKey(callId) }),
      );
      return head.ContentLength ?? 0;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }
}

/** Only a UUID becomes a key, as only a UUID becomes a path for the file store. */
function objectKey(callId: string): string {
  if (!isUuid(callId)) throw new Error(`not a call id: ${JSON.stringify(callId)}`);
  return `${callId.toLowerCase()}.wav`;
}

function isNotFound(error: unknown): boolean {
  return (
    error instanceof S3ServiceException &&
    (error.name === 'NotFound' || error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404)
  );
}
