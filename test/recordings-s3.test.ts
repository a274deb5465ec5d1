import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Call, Workspace } from '../db/entities/index.js';
import { createLogger } from '../lib/logger.js';
import { recordingFailures } from '../lib/metrics/service-metrics.js';
import { untilRecordingKept } from '../lib/recordings/kept-recording.js';
import { recordingPath } from '../lib/recordings/recording-files.js';
import type { RecordingStore } from '../lib/recordings/recording-store.js';
import { RecordingWriter } from '../lib/recordings/recording-writer.js';
import { expireRecordings } from '../lib/recordings/retention.js';
import { S3RecordingStore } from '../lib/recordings/s3-recording-store.js';
import { loadSettings } from '../lib/settings.js';
import { openRecording } from '../media/call-recording.js';
import { RecordingUploads } from '../media/recording-uploads.js';
import { freePort } from '../scripts/processes.js';
import { createFixture, type Fixture, startApi, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { type AgentFixture, createAgentFixture, createQueuedCall } from './support/call-fixtures.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { startTestS3, type TestS3 } from './support/s3.js';

// RECORDINGS_STORE=s3 (telephony spec section 4) against a real S3-compatible server (versitygw,
// scripts/s3-server.ts): the gateway's upload once a recording is closed (and its retries and
// sweep when the store is down), the API's GET with ranges and DELETE from the store, has_recording
// following the object, retention on the bucket, and a store that is down costing a 503 on the
// recording's own routes only. The file store's routes are test/api-recordings.test.ts.

let db: TestDatabase;
let s3: TestS3;
let api: TestApi;
let dir: string;
let owner: Fixture;
let agent: AgentFixture;
const logger = createLogger('error', { write: () => {} });

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'recordings-s3-'));
  [db, s3] = await Promise.all([freshDatabase(), startTestS3()]);
  api = await startApi({
    orm: db.orm,
    settings: { recordingsDir: dir, recordingsStore: { kind: 's3', ...s3.settings } },
  });
  owner = await createFixture(db.orm, { requestsPerSecond: 10_000 });
  agent = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId });
});

after(async () => {
  await api?.close();
  await db?.close();
  await s3?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const em = () => db.orm.em.fork();

function uploads(store: RecordingStore, live: (callId: string) => boolean = () => false) {
  return new RecordingUploads({ store, dir, em: () => em() as EntityManager, live, logger });
}

/** A call in `status` with two seconds of audio written locally, as the gateway writes it (not yet kept). */
async function localRecording(
  status: Call['status'] = 'completed',
  endedAt: Date | null = new Date(),
  of: AgentFixture = agent,
) {
  const call = await createQueuedCall(db.orm, of, { to: '+4791234567' });
  await em().nativeUpdate(Call, { id: call.id }, { status, endedAt, mediaGateway: 'http://gateway' });
  const writer = await RecordingWriter.open(dir, call.id);
  for (let ms = 0; ms < 2000; ms += 20) writer.caller(new Int16Array(160).fill(ms), ms);
  await writer.close();
  return { callId: call.id, file: await readFile(recordingPath(dir, call.id)) };
}

/** A recording the gateway kept in the store: the local copy is gone once the upload is confirmed. */
async function keptRecording() {
  const recording = await localRecording();
  assert.equal(await uploads(s3.store).keep(recording.callId), true);
  assert.equal(existsSync(recordingPath(dir, recording.callId)), false, 'the local copy is gone');
  return recording;
}

async function getRecording(callId: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${api.url}/v1/calls/${callId}/recording`, {
    headers: { authorization: `Bearer ${owner.secret}`, ...headers },
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  const json = response.headers.get('content-type')?.startsWith('application/json');
  const text = bytes.toString('utf8');
  return {
    status: response.status,
    headers: response.headers,
    bytes,
    text,
    body: json ? JSON.parse(text) : undefined,
  };
}

/** A store on a port where nothing listens: every request fails as a store that is down does. */
async function downSettings() {
  return { ...s3.settings, endpoint: `http://127.0.0.1:${await freePort()}` };
}
const downStore = async () => new S3RecordingStore(await downSettings());

describe('the API over an S3 store', () => {
  test('GET streams the kept object whole and in ranges; has_recording follows it; DELETE removes it there', async () => {
    const { callId, file } = await keptRecording();
    const whole = await getRecording(callId);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'audio/wav');
    assert.equal(whole.headers.get('content-length'), String(file.length));
    assert.ok(whole.bytes.equals(file));
    for (const [range, start, end] of [
      ['bytes=44-', 44, file.length - 1],
      ['bytes=-10', file.length - 10, file.length - 1],
      ['bytes=0-3', 0, 3],
    ] as const) {
      const part = await getRecording(callId, { range });
      assert.equal(part.status, 206, range);
      assert.equal(part.headers.get('content-range'), `bytes ${start}-${end}/${file.length}`);
      assert.ok(part.bytes.equals(file.subarray(start, end + 1)), range);
    }
    const refused = await getRecording(callId, { range: `bytes=${file.length}-` });
    assertApiError(refused, 416, 'range_not_satisfiable', 'Range');
    const client = api.client(owner.secret);
    assert.equal((await client.get(`/calls/${callId}`)).body.has_recording, true);

    const deleted = await client.delete(`/calls/${callId}/recording`);
    assert.deepEqual(deleted.body, { object: 'recording', call_id: callId, deleted: true });
    assert.equal(await s3.store.has(callId), false, 'gone from the bucket');
    assertApiError(await getRecording(callId), 404, 'resource_missing', 'call_id');
    assert.equal((await client.get(`/calls/${callId}`)).body.has_recording, false);
    assertApiError(await client.delete(`/calls/${callId}/recording`), 404, 'resource_missing', 'call_id');
  });

  test('a recording deleted between the look and the read is a clean miss, not a broken answer', async () => {
    const { callId } = await keptRecording();
    const reader = (await s3.store.open(callId))!;
    await s3.store.delete(callId);
    assert.equal(await reader.stream({ start: 0, end: 3 }), null);
  });

  test('a store that is down: the recording routes answer 503 upstream_unavailable, the call is still shown', async () => {
    const { callId } = await localRecording();
    const settings = {
      recordingsDir: dir,
      recordingsStore: { kind: 's3' as const, ...(await downSettings()) },
    };
    const down = await startApi({ orm: db.orm, settings });
    try {
      const get = await fetch(`${down.url}/v1/calls/${callId}/recording`, {
        headers: { authorization: `Bearer ${owner.secret}` },
      });
      const text = await get.text();
      const body = JSON.parse(text);
      assertApiError({ status: get.status, headers: get.headers, text, body }, 503, 'upstream_unavailable');
      assert.ok(get.headers.get('retry-after'));
      assert.doesNotMatch(JSON.stringify(body), new RegExp(s3.settings.secretAccessKey!));
      assertApiError(
        await down.client(owner.secret).delete(`/calls/${callId}/recording`),
        503,
        'upstream_unavailable',
      );
      const call = await down.client(owner.secret).get(`/calls/${callId}`);
      assert.equal(call.status, 200);
      assert.equal(call.body.has_recording, null, 'not known while the store is down');
    } finally {
      await down.close();
      await rm(recordingPath(dir, callId), { force: true });
    }
  });
});

describe('the gateway’s uploads', () => {
  test('closing a call’s recording uploads it: the object is whole, the local copy gone', async () => {
    const call = await createQueuedCall(db.orm, agent, { to: '+4791234567' });
    const recording = (await openRecording(dir, call.id, logger, { uploads: uploads(s3.store) }))!;
    for (let ms = 0; ms < 1000; ms += 20) recording.caller(new Int16Array(160).fill(7), ms);
    await recording.close();
    assert.equal(existsSync(recordingPath(dir, call.id)), false);
    const reader = (await s3.store.open(call.id))!;
    assert.equal(reader.size, 44 + 8000 * 4);
    // Closing again uploads nothing twice and does not fail.
    await recording.close();
  });

  test('a store that is down: the file stays, one failure is counted; the sweep uploads it later, only for final calls not live here', async () => {
    const final = await localRecording('completed');
    const ongoing = await localRecording('in_progress', null);
    const liveHere = await localRecording('completed');
    let up = false;
    const down = await downStore();
    // The gateway's store, down until `up`: the real store then (a switch at the port).
    const flaky: RecordingStore = new Proxy(s3.store, {
      get: (target, name) => {
        const store = up ? target : down;
        const value = Reflect.get(store, name);
        return typeof value === 'function' ? value.bind(store) : value;
      },
    });
    let now = 0;
    const logged: string[] = [];
    const gateway = new RecordingUploads({
      store: flaky,
      dir,
      em: () => em() as EntityManager,
      live: (id) => id === liveHere.callId,
      logger: createLogger('debug', { write: (line) => logged.push(line) }),
      now: () => now,
    });
    const failuresBefore = await uploadFailures();
    assert.equal(await gateway.keep(final.callId), false);
    assert.equal(await gateway.sweep(), 0, 'backed off: not tried again at once');
    now += 5_000;
    assert.equal(await gateway.sweep(), 0, 'still down');
    assert.ok(existsSync(recordingPath(dir, final.callId)), 'the local file stays');
    assert.equal((await uploadFailures()) - failuresBefore, 1, 'counted once for the call');
    // The failure is logged (once, with why) and the store's keys never are.
    assert.equal(logged.filter((line) => line.includes('recording not uploaded yet')).length, 1);
    const { accessKeyId, secretAccessKey } = s3.settings;
    assert.ok(accessKeyId && secretAccessKey, 'the test store has keys');
    for (const line of logged) {
      assert.ok(!line.includes(accessKeyId) && !line.includes(secretAccessKey), `a key was logged: ${line}`);
    }

    up = true;
    now += 5_000;
    assert.equal(await gateway.sweep(), 0, 'the backoff doubled: not yet');
    now += 10_000;
    assert.equal(await gateway.sweep(), 1);
    assert.equal(await s3.store.has(final.callId), true);
    assert.equal(existsSync(recordingPath(dir, final.callId)), false);
    // A call still going and one live on this gateway keep their files here.
    assert.equal(await s3.store.has(ongoing.callId), false);
    assert.equal(await s3.store.has(liveHere.callId), false);
    assert.ok(existsSync(recordingPath(dir, ongoing.callId)));
    // A gateway started later (its sweep at start) uploads what an earlier run left, once it is final.
    await em().nativeUpdate(Call, { id: ongoing.callId }, { status: 'completed', endedAt: new Date() });
    assert.equal(await uploads(s3.store, (id) => id === liveHere.callId).sweep(), 1);
    assert.equal(await s3.store.has(ongoing.callId), true);
  });
});

describe('retention 0 at the gateway’s uploads', () => {
  test('a final call’s file is removed, never uploaded, when the store was down at its end; one that became final while it went up is deleted there again', async () => {
    const keepsNone = await createAgentFixture(db.orm);
    await em().nativeUpdate(Workspace, { id: keepsNone.workspaceId }, { recordingRetentionDays: 0 });
    // The store was down as the call ended: the file stayed for the sweep, which finds the call
    // final in a workspace that keeps nothing.
    const late = await localRecording('in_progress', null, keepsNone);
    assert.equal(await uploads(await downStore()).keep(late.callId), false);
    assert.ok(existsSync(recordingPath(dir, late.callId)), 'left for the sweep');
    await em().nativeUpdate(Call, { id: late.callId }, { status: 'completed', endedAt: new Date() });
    await uploads(s3.store).sweep();
    assert.equal(await s3.store.has(late.callId), false, 'never uploaded');
    assert.equal(existsSync(recordingPath(dir, late.callId)), false, 'the local file is gone too');

    // Uploaded while the call was still going, and final (its last step done) before the upload landed.
    const racing = await localRecording('in_progress', null, keepsNone);
    const endsWhileUploading: RecordingStore = new Proxy(s3.store, {
      get: (target, name) => {
        if (name === 'keep')
          return async (callId: string, file: string) => {
            await target.keep(callId, file);
            await em().nativeUpdate(Call, { id: callId }, { status: 'completed', endedAt: new Date() });
          };
        const value = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    assert.equal(await uploads(endsWhileUploading).keep(racing.callId), true);
    assert.equal(await s3.store.has(racing.callId), false, 'deleted again once the call was final');
    assert.equal(existsSync(recordingPath(dir, racing.callId)), false);

    // The same race in a workspace that keeps recordings leaves the object where it is.
    const kept = await localRecording('in_progress', null);
    assert.equal(await uploads(endsWhileUploading).keep(kept.callId), true);
    assert.equal(await s3.store.has(kept.callId), true);
  });
});

async function uploadFailures(): Promise<number> {
  const metric = await recordingFailures.get();
  return metric.values.find((value) => value.labels.stage === 'upload')?.value ?? 0;
}

describe('the call’s last step and retention on the bucket', () => {
  test('the call is completed once the recording landed (within a bound); a text-only call does not wait', async () => {
    const { callId } = await localRecording();
    const landing = new Promise<void>((resolve) =>
      setTimeout(
        () =>
          void uploads(s3.store)
            .keep(callId)
            .then(() => resolve()),
        600,
      ),
    );
    const started = Date.now();
    assert.equal(await untilRecordingKept(em() as EntityManager, s3.store, callId, 10_000), true);
    assert.ok(Date.now() - started >= 500, 'it waited for the upload');
    await landing;
    const textOnly = await createQueuedCall(db.orm, agent, { to: '+4791234568' });
    assert.equal(await untilRecordingKept(em() as EntityManager, s3.store, textOnly.id, 10_000), false);
    // A recording that never lands: the wait ends at its bound.
    const { callId: stuck } = await localRecording();
    const waited = Date.now();
    assert.equal(await untilRecordingKept(em() as EntityManager, s3.store, stuck, 400), false);
    assert.ok(Date.now() - waited < 2_000);
  });

  test('retention deletes the objects of final calls past their workspace’s days, and nothing else', async () => {
    const week = await createAgentFixture(db.orm);
    await em().nativeUpdate(Workspace, { id: week.workspaceId }, { recordingRetentionDays: 7 });
    const own = await createTestBucket();
    const kept = async (endedDaysAgo: number) => {
      const call = await createQueuedCall(db.orm, week, { to: '+4790011111' });
      const endedAt = new Date(Date.now() - endedDaysAgo * 24 * 3600_000);
      await em().nativeUpdate(Call, { id: call.id }, { status: 'completed', endedAt });
      const local = path.join(dir, `${call.id}.wav`);
      await writeFile(local, Buffer.alloc(44));
      await own.keep(call.id, local);
      return call.id;
    };
    const old = await kept(8);
    const young = await kept(6);
    assert.deepEqual(await expireRecordings(em() as EntityManager, own, new Date()), {
      checked: 2,
      deleted: 1,
    });
    assert.deepEqual(await own.callIds(), [young]);
    assert.equal(await own.has(old), false);
  });
});

/** A bucket of its own, so the listing holds exactly this test's objects. */
async function createTestBucket(): Promise<S3RecordingStore> {
  const store = new S3RecordingStore({ ...s3.settings, bucket: `${s3.settings.bucket}-r` });
  await store.ensureBucket();
  return store;
}

describe('RECORDINGS_STORE settings', () => {
  test('file by default; s3 needs a bucket and both keys or neither; the keys never appear in a refusal', () => {
    assert.deepEqual(loadSettings({}).recordingsStore, { kind: 'file' });
    const s3Env = {
      RECORDINGS_STORE: 's3',
      RECORDINGS_S3_BUCKET: 'calls',
      RECORDINGS_S3_ENDPOINT: 'http://127.0.0.1:9000',
    };
    assert.deepEqual(loadSettings(s3Env).recordingsStore, {
      kind: 's3',
      endpoint: 'http://127.0.0.1:9000',
      bucket: 'calls',
      region: 'us-east-1',
      accessKeyId: undefined,
      secretAccessKey: undefined,
    });
    assert.throws(() => loadSettings({ RECORDINGS_STORE: 'disk' }), /RECORDINGS_STORE must be file or s3/);
    assert.throws(() => loadSettings({ RECORDINGS_STORE: 's3' }), /needs RECORDINGS_S3_BUCKET/);
    assert.throws(
      () => loadSettings({ ...s3Env, RECORDINGS_S3_ENDPOINT: 'localhost:9000' }),
      /RECORDINGS_S3_ENDPOINT must be an http\(s\) URL/,
    );
    const secret = 'wJalrXUtnFEMI-very-secret';
    assert.throws(
      () => loadSettings({ ...s3Env, RECORDINGS_S3_SECRET_ACCESS_KEY: secret }),
      (error: Error) => /go together/.test(error.message) && !error.message.includes(secret),
    );
  });
});
