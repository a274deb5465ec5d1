import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadSettings } from '../lib/settings.js';
import { VOICES } from '../lib/voice-runtime/voices.js';
import { createFixture, startApi, type TestApi } from './support/api.js';
import { signedInClient } from './support/dashboard-session.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { type SpeechStandIn, startSpeechStandIn } from './support/speech-stand-in.js';

// The dashboard's voice picker (GET /dashboard/api/voices): the voices the configured text-to-speech
// service really has (its GET /audio/voices, as the local speech server answers it), the simulator's
// without speech, and 503 when the service does not answer.

let db: TestDatabase;
let standIn: SpeechStandIn;
let failing = false;
const apis: TestApi[] = [];

before(async () => {
  db = await freshDatabase();
  standIn = await startSpeechStandIn((request) => {
    if (failing) return { status: 500, body: { error: { message: 'down' } } };
    if (request.method === 'GET' && request.path === '/v1/audio/voices') {
      return { status: 200, body: { voices: [{ id: 'joe', name: 'Joe', language: 'en-US' }] } };
    }
    return { status: 404 };
  });
});
after(async () => {
  for (const api of apis) await api.close();
  await standIn?.close();
  await db?.close();
});

async function voicesFrom(settings: Parameters<typeof startApi>[0]['settings'], query = '') {
  const api = await startApi({ orm: db.orm, settings });
  apis.push(api);
  const owner = await createFixture(db.orm, { requestsPerSecond: 10_000 });
  const client = await signedInClient(api.url, db.orm, owner.userId);
  return client.request('GET', `/dashboard/api/voices${query}`);
}

const withSpeech = () => {
  const speech = loadSettings({ VOICE_TTS_URL: standIn.url, VOICE_STT_URL: standIn.url }).speech;
  return { speech };
};

test('with speech configured, the picker lists the voices the text-to-speech service has', async () => {
  const res = await voicesFrom(withSpeech());
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.data, [{ id: 'joe', name: 'Joe', language: 'en-US' }]);
  assert.ok(standIn.requests.some((r) => r.path === '/v1/audio/voices'));
});

test('without speech, the simulator voices of text-only calls', async () => {
  const res = await voicesFrom({});
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.data, VOICES);
});

test('a text-to-speech service that fails: 503 upstream_unavailable, with Retry-After', async () => {
  failing = true;
  try {
    const res = await voicesFrom(withSpeech());
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'upstream_unavailable');
    assert.ok(res.headers.get('retry-after'));
  } finally {
    failing = false;
  }
});

test('the agent’s language first: ?language= puts its voices (by primary subtag) at the top, the rest in order; a tag that is no BCP 47 is a 400', async () => {
  const simulator = await voicesFrom({}, '?language=de-AT');
  assert.deepEqual(
    simulator.body.data.map((voice: { id: string }) => voice.id),
    ['sim-lena', 'sim-nora', 'sim-henrik', 'sim-emma', 'sim-james', 'sim-alex'],
  );
  const norwegian = await voicesFrom({}, '?language=nb-NO');
  assert.deepEqual(norwegian.body.data.map((voice: { id: string }) => voice.id).slice(0, 2), [
    'sim-nora',
    'sim-henrik',
  ]);
  const refused = await voicesFrom({}, '?language=not%20a%20tag');
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.param, 'language');
});
