import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadSettings } from '../lib/settings.js';
import { LOCAL_SPEECH_LANGUAGES, localSpeechServes } from '../lib/speech/local-languages.js';
import { closeApiAndDatabase, createFixture, type Fixture, startApi, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

// An agent's language and the deployment's speech (issue 34, docs/voice.md "Languages"): with
// VOICE_SPEECH=local an agent is published only in a language the local speech server hears and
// speaks (422 language_not_supported, param language, naming those it does); hosted speech is
// asked in any language.

let db: TestDatabase;
let local: TestApi;
let hosted: TestApi;
let owner: Fixture;

before(async () => {
  db = await freshDatabase();
  const speech = loadSettings({}).speech;
  const endpoint = { url: 'http://127.0.0.1:9/v1', apiKey: undefined, model: 'whisper-1', timeoutMs: 1000 };
  local = await startApi({ orm: db.orm, settings: { speech: { ...speech, local: true, stt: endpoint } } });
  hosted = await startApi({ orm: db.orm, settings: { speech: { ...speech, local: false, stt: endpoint } } });
  owner = await createFixture(db.orm, { requestsPerSecond: 10_000 });
});
after(async () => {
  await hosted?.close();
  await closeApiAndDatabase(local, db);
});

const agentIn = async (api: TestApi, language?: string) => {
  const created = await api.client(owner.secret).post('/agents', {
    name: 'Desk',
    system_prompt: 'You answer the phone.',
    ...(language ? { language } : {}),
  });
  assert.equal(created.status, 201, created.text);
  return created.body.id as string;
};

test('the local speech serves English, Norwegian Bokmål, Swedish, Danish and German, by primary subtag', () => {
  assert.deepEqual(
    LOCAL_SPEECH_LANGUAGES.map((language) => language.tag),
    ['en-US', 'nb-NO', 'sv-SE', 'da-DK', 'de-DE'],
  );
  for (const tag of ['en-GB', 'nb-NO', 'no', 'NB', 'sv-FI', 'da', 'de-AT'])
    assert.ok(localSpeechServes(tag), tag);
  for (const tag of ['fr-FR', 'nn-NO', 'fi', 'es']) assert.ok(!localSpeechServes(tag), tag);
});

test('with local speech an agent in another language is not published: 422 language_not_supported naming those it hears', async () => {
  const api = local.client(owner.secret);
  const french = await agentIn(local, 'fr-FR');
  const refused = await api.post(`/agents/${french}/publish`);
  assertApiError(refused, 422, 'language_not_supported', 'language');
  assert.match(refused.body.error.message, /fr-FR/);
  assert.match(refused.body.error.message, /nb-NO \(Norwegian Bokmål\).*de-DE \(German\)/);
  assert.equal((await api.get(`/agents/${french}`)).body.status, 'draft', 'nothing changed');
  // Its default language (nb-NO) and English are published.
  for (const language of [undefined, 'en-GB']) {
    const id = await agentIn(local, language);
    assert.equal((await api.post(`/agents/${id}/publish`)).status, 200);
  }
});

test('a published agent cannot move to a language the local speech does not hear; one it hears is taken', async () => {
  const api = local.client(owner.secret);
  const id = await agentIn(local, 'sv-SE');
  assert.equal((await api.post(`/agents/${id}/publish`)).status, 200);
  const refused = await api.patch(`/agents/${id}`, { language: 'fr-FR', name: 'Renamed' });
  assertApiError(refused, 422, 'language_not_supported', 'language');
  const unchanged = (await api.get(`/agents/${id}`)).body;
  assert.deepEqual([unchanged.language, unchanged.name], ['sv-SE', 'Desk'], 'nothing is half-written');
  assert.equal((await api.patch(`/agents/${id}`, { language: 'da-DK' })).body.language, 'da-DK');
  // A draft may hold any language until it is published.
  const draft = await agentIn(local);
  assert.equal((await api.patch(`/agents/${draft}`, { language: 'fr-FR' })).status, 200);
});

test('hosted speech is asked in any language: nothing is refused', async () => {
  const id = await agentIn(hosted, 'fr-FR');
  assert.equal((await hosted.client(owner.secret).post(`/agents/${id}/publish`)).status, 200);
});
