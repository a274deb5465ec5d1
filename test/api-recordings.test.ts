import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import wavefile from 'wavefile';
import { createClient, type RecordingDeleted } from '../clients/typescript/src/index.js';
import { recordingPath } from '../lib/recordings/recording-files.js';
import { RecordingWriter } from '../lib/recordings/recording-writer.js';
import { createFixture, type Fixture, startApi, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { type AgentFixture, createAgentFixture, createQueuedCall } from './support/call-fixtures.js';
import { signedInClient } from './support/dashboard-session.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

// GET and DELETE /v1/calls/{call_id}/recording over real HTTP against PostgreSQL, with a
// recording written by the media gateway's RecordingWriter into RECORDINGS_DIR: whole files, byte
// ranges, refusals, and has_recording following the file.

let db: TestDatabase;
let api: TestApi;
let dir: string;
let owner: Fixture;
let agent: AgentFixture;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'api-recordings-'));
  db = await freshDatabase();
  api = await startApi({ orm: db.orm, settings: { recordingsDir: dir } });
  owner = await createFixture(db.orm, { requestsPerSecond: 10_000 });
  agent = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId });
});

after(async () => {
  await api?.close();
  await db?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A call of the owner's workspace with two seconds of recorded audio on both channels. */
async function recordedCall(): Promise<{ callId: string; file: Buffer }> {
  const call = await createQueuedCall(db.orm, agent, { to: '+4791234567' });
  const writer = await RecordingWriter.open(dir, call.id);
  writer.agent(new Int16Array(8000).fill(-400), 0);
  for (let ms = 0; ms < 2000; ms += 20) writer.caller(new Int16Array(160).fill(ms), ms);
  await writer.close();
  return { callId: call.id, file: await readFile(recordingPath(dir, call.id)) };
}

/** GET of the recording with the raw bytes of the answer (the JSON client would decode them as text). */
async function getRecording(callId: string, headers: Record<string, string> = {}, secret = owner.secret) {
  const response = await fetch(`${api.url}/v1/calls/${callId}/recording`, {
    headers: { authorization: `Bearer ${secret}`, ...headers },
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  const text = bytes.toString('utf8');
  const body = response.headers.get('content-type')?.startsWith('application/json')
    ? JSON.parse(text)
    : undefined;
  return { status: response.status, headers: response.headers, bytes, body, text };
}

describe('GET /v1/calls/{call_id}/recording', () => {
  test('the whole file, audio/wav with its length, as wavefile reads it', async () => {
    const { callId, file } = await recordedCall();
    const res = await getRecording(callId);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'audio/wav');
    assert.equal(res.headers.get('content-length'), String(file.length));
    assert.equal(res.headers.get('accept-ranges'), 'bytes');
    assert.equal(res.headers.get('content-range'), null);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.ok(res.bytes.equals(file));
    const wav = new wavefile.WaveFile(res.bytes);
    const [caller, agentChannel] = wav.getSamples(false, Int16Array) as unknown as Int16Array[];
    assert.equal(caller.length, 16_000);
    assert.equal(caller[8000], 1000, 'the caller frame sent at 1000 ms is at sample 8000');
    assert.deepEqual(new Set(agentChannel.subarray(0, 8000)), new Set([-400]));
    assert.equal((await api.client(owner.secret).get(`/calls/${callId}`)).body.has_recording, true);
    // HEAD: the same headers, no body (how a player may learn the length first).
    const head = await fetch(`${api.url}/v1/calls/${callId}/recording`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${owner.secret}` },
    });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(file.length));
    assert.equal((await head.arrayBuffer()).byteLength, 0);
  });

  test('one byte range: start-end, open-ended, suffix; 206 with Content-Range', async () => {
    const { callId, file } = await recordedCall();
    const size = file.length;
    const cases: [string, number, number][] = [
      ['bytes=0-43', 0, 43],
      ['bytes=100-', 100, size - 1],
      ['bytes=-10', size - 10, size - 1],
      ['bytes=1000-999999', 1000, size - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await getRecording(callId, { range });
      assert.equal(res.status, 206, range);
      assert.equal(res.headers.get('content-range'), `bytes ${start}-${end}/${size}`, range);
      assert.equal(res.headers.get('content-length'), String(end - start + 1), range);
      assert.equal(res.headers.get('content-type'), 'audio/wav');
      assert.ok(res.bytes.equals(file.subarray(start, end + 1)), range);
    }
    // Not a byte range, or several: ignored, the whole file.
    for (const range of ['items=0-5', 'bytes=0-1,10-20']) {
      const res = await getRecording(callId, { range });
      assert.equal(res.status, 200, range);
      assert.ok(res.bytes.equals(file), range);
    }
  });

  test('a byte range that cannot be served is 416 with Content-Range bytes */size', async () => {
    const { callId, file } = await recordedCall();
    for (const range of [
      `bytes=${file.length}-`,
      `bytes=${file.length + 10}-${file.length + 20}`,
      'bytes=abc',
    ]) {
      const res = await getRecording(callId, { range });
      assertApiError(res, 416, 'range_not_satisfiable', 'Range');
      assert.equal(res.headers.get('content-range'), `bytes */${file.length}`);
    }
  });

  test('another workspace’s call, an unknown call and a call without a recording are 404', async () => {
    const { callId } = await recordedCall();
    const stranger = await createFixture(db.orm);
    assertApiError(await getRecording(callId, {}, stranger.secret), 404, 'resource_missing', 'call_id');
    const strangerDelete = await api.client(stranger.secret).delete(`/calls/${callId}/recording`);
    assertApiError(strangerDelete, 404, 'resource_missing', 'call_id');
    assertApiError(await getRecording(crypto.randomUUID()), 404, 'resource_missing', 'call_id');
    assertApiError(await getRecording('not-a-uuid'), 400, 'parameter_invalid', 'call_id');
    // A text-only call: no file, so no recording and has_recording false.
    const textOnly = await createQueuedCall(db.orm, agent, { to: '+4791234568' });
    assertApiError(await getRecording(textOnly.id), 404, 'resource_missing', 'call_id');
    assert.equal((await api.client(owner.secret).get(`/calls/${textOnly.id}`)).body.has_recording, false);
    const list = await api.client(owner.secret).get('/calls');
    assert.ok(list.body.data.every((call: { has_recording: unknown }) => call.has_recording === null));
  });

  test('needs calls:read; DELETE needs calls:write', async () => {
    const { callId } = await recordedCall();
    const agentsOnly = await createFixture(db.orm, {
      workspaceId: owner.workspaceId,
      scopes: ['agents:read'],
    });
    assertApiError(await getRecording(callId, {}, agentsOnly.secret), 403, 'missing_scope');
    const reader = await createFixture(db.orm, { workspaceId: owner.workspaceId, scopes: ['calls:read'] });
    assert.equal((await getRecording(callId, {}, reader.secret)).status, 200);
    assertApiError(
      await api.client(reader.secret).delete(`/calls/${callId}/recording`),
      403,
      'missing_scope',
    );
    assert.equal((await getRecording(callId)).status, 200, 'still there');
  });
});

describe('DELETE /v1/calls/{call_id}/recording', () => {
  test('deletes the file; afterwards GET is 404 and has_recording false', async () => {
    const { callId } = await recordedCall();
    const client = api.client(owner.secret);
    const res = await client.delete(`/calls/${callId}/recording`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { object: 'recording', call_id: callId, deleted: true });
    assertApiError(await getRecording(callId), 404, 'resource_missing', 'call_id');
    assert.equal((await client.get(`/calls/${callId}`)).body.has_recording, false);
    assertApiError(await client.delete(`/calls/${callId}/recording`), 404, 'resource_missing', 'call_id');
  });
});

describe('the typed client', () => {
  test('reads the recording as bytes, with a range, and deletes it', async () => {
    const { callId, file } = await recordedCall();
    const client = createClient({ baseUrl: api.url, apiKey: owner.secret });
    const part = await client.GET('/calls/{call_id}/recording', {
      params: { path: { call_id: callId }, header: { Range: 'bytes=44-' } },
      parseAs: 'arrayBuffer',
    });
    assert.equal(part.response.status, 206);
    assert.ok(Buffer.from(part.data!).equals(file.subarray(44)));
    const deleted = await client.DELETE('/calls/{call_id}/recording', {
      params: { path: { call_id: callId } },
    });
    const answer: RecordingDeleted | undefined = deleted.data;
    assert.deepEqual(answer, { object: 'recording', call_id: callId, deleted: true });
  });
});

describe('the dashboard’s player', () => {
  test('a signed-in person plays it through /v1 with ranges; a viewer may listen, not delete', async () => {
    const { callId, file } = await recordedCall();
    const person = await signedInClient(api.url, db.orm, owner.userId);
    const part = await person.request('GET', `/v1/calls/${callId}/recording`, {
      headers: { range: 'bytes=0-3' },
    });
    assert.equal(part.status, 206);
    assert.equal(part.text, 'RIFF');
    assert.equal(part.headers.get('content-range'), `bytes 0-3/${file.length}`);

    const viewer = await createFixture(db.orm, { workspaceId: owner.workspaceId, role: 'viewer' });
    const viewing = await signedInClient(api.url, db.orm, viewer.userId);
    assert.equal((await viewing.get(`/v1/calls/${callId}/recording`)).status, 200);
    assertApiError(await viewing.request('DELETE', `/v1/calls/${callId}/recording`), 403, 'role_required');
    const signedOut = await fetch(`${api.url}/v1/calls/${callId}/recording`);
    assert.equal(signedOut.status, 401);
  });
});
