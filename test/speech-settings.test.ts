import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadSettings, STT_TIMEOUT_MS, TTS_TIMEOUT_MS } from '../lib/settings.js';
import { setUpVoice } from '../scripts/voice-setup.js';

// VOICE_SPEECH and VOICE_STT_* / VOICE_TTS_* (spec voice-media-v1 section 2): where speech comes from.

test('nothing set: no speech, calls stay text-only', () => {
  assert.deepEqual(loadSettings({}).speech, { local: false, stt: undefined, tts: undefined });
});

test('VOICE_SPEECH=local asks for the local speech server', () => {
  assert.deepEqual(loadSettings({ VOICE_SPEECH: 'local' }).speech, {
    local: true,
    stt: undefined,
    tts: undefined,
  });
});

test('the URLs, keys and models name the two endpoints, with the defaults of the spec', () => {
  const { speech } = loadSettings({
    VOICE_STT_URL: 'https://stt.example.com/v1/',
    VOICE_STT_API_KEY: 'sk-stt',
    VOICE_TTS_URL: 'http://127.0.0.1:8000/v1',
  });
  assert.deepEqual(speech.stt, {
    url: 'https://stt.example.com/v1',
    apiKey: 'sk-stt',
    model: 'whisper-1',
    timeoutMs: STT_TIMEOUT_MS,
  });
  assert.deepEqual(speech.tts, {
    url: 'http://127.0.0.1:8000/v1',
    apiKey: undefined,
    model: 'tts-1',
    timeoutMs: TTS_TIMEOUT_MS,
  });
  const models = loadSettings({
    VOICE_STT_URL: 'https://a.example/v1',
    VOICE_STT_MODEL: 'whisper-large-v3',
    VOICE_TTS_URL: 'https://a.example/v1',
    VOICE_TTS_MODEL: 'gpt-4o-mini-tts',
  }).speech;
  assert.equal(models.stt?.model, 'whisper-large-v3');
  assert.equal(models.tts?.model, 'gpt-4o-mini-tts');
});

test('a key or model without its URL is no endpoint', () => {
  const { speech } = loadSettings({ VOICE_STT_API_KEY: 'sk-x', VOICE_TTS_MODEL: 'tts-1-hd' });
  assert.equal(speech.stt, undefined);
  assert.equal(speech.tts, undefined);
});

test('VOICE_PREEMPTIVE_GENERATION: on unless set false', () => {
  assert.equal(loadSettings({}).media.preemptiveGeneration, true);
  assert.equal(loadSettings({ VOICE_PREEMPTIVE_GENERATION: 'true' }).media.preemptiveGeneration, true);
  assert.equal(loadSettings({ VOICE_PREEMPTIVE_GENERATION: 'false' }).media.preemptiveGeneration, false);
});

test('a bad VOICE_SPEECH is refused at start', () => {
  assert.throws(
    () => loadSettings({ VOICE_SPEECH: 'openai' }),
    /VOICE_SPEECH must be local or unset; got "openai"/,
  );
  assert.throws(() => loadSettings({ VOICE_SPEECH: 'LOCAL ' }), /VOICE_SPEECH must be local or unset/);
});

test('a URL that is not an http(s) base URL is refused, without repeating what may be a key', () => {
  const refusals: [Record<string, string>, RegExp][] = [
    [{ VOICE_STT_URL: 'sk-secret-123' }, /VOICE_STT_URL must be the http\(s\) base URL.*not a URL/],
    [{ VOICE_TTS_URL: 'ftp://tts.example/v1' }, /VOICE_TTS_URL must be .*scheme "ftp:"/],
    [{ VOICE_TTS_URL: 'https://user:sk-secret-123@tts.example/v1' }, /VOICE_TTS_URL .*user name or password/],
  ];
  for (const [env, message] of refusals) {
    assert.throws(
      () => loadSettings(env),
      (error: Error) => message.test(error.message) && !error.message.includes('sk-secret-123'),
    );
  }
});

test('with speech, npm start points the workers at its gateway for the calls they place (MEDIA_GATEWAY_URL)', async () => {
  const speech = { VOICE_STT_URL: 'http://127.0.0.1:1/v1', VOICE_TTS_URL: 'http://127.0.0.1:1/v1' };
  const env = {
    ...speech,
    MEDIA_PORT: '8123',
    MEDIA_STREAMS_TOKEN: 'token-x',
    MEDIA_CONTROL_TOKEN: 'control-x',
  };
  assert.equal(loadSettings(env).media.gatewayUrl, undefined);
  const started = await setUpVoice(loadSettings(env), '/nonexistent', () => {});
  // The control API is on the next port, on loopback, with a secret of its own.
  assert.deepEqual(started.env, {
    MEDIA_STREAMS_TOKEN: 'token-x',
    MEDIA_GATEWAY_URL: 'http://127.0.0.1:8123',
    MEDIA_CONTROL_URL: 'http://127.0.0.1:8124',
    MEDIA_CONTROL_TOKEN: 'control-x',
  });
  const elsewhere = { ...env, MEDIA_GATEWAY_URL: 'http://media:8090' };
  assert.equal(loadSettings(elsewhere).media.gatewayUrl, 'http://media:8090');
  assert.equal(
    (await setUpVoice(loadSettings(elsewhere), '/nonexistent', () => {})).env.MEDIA_GATEWAY_URL,
    'http://media:8090',
  );
  // No speech: no gateway, placed calls stay text-only.
  assert.deepEqual(
    (await setUpVoice(loadSettings({ MEDIA_PORT: '8123' }), '/nonexistent', () => {})).env,
    {},
  );
});

test('VOICE_TURN_DETECTION: model by default with speech (local, or a speech-to-text service), silence without; the pause and the longest wait checked by name', () => {
  assert.deepEqual(loadSettings({}).media.turnDetection, { mode: 'silence', pauseMs: 200, maxMs: 2000 });
  assert.equal(
    loadSettings({ VOICE_STT_URL: 'https://speech.example/v1', VOICE_TTS_URL: 'https://speech.example/v1' })
      .media.turnDetection.mode,
    'model',
  );
  assert.deepEqual(loadSettings({ VOICE_SPEECH: 'local' }).media.turnDetection, {
    mode: 'model',
    pauseMs: 200,
    maxMs: 2000,
  });
  assert.equal(
    loadSettings({ VOICE_SPEECH: 'local', VOICE_TURN_DETECTION: 'silence' }).media.turnDetection.mode,
    'silence',
  );
  assert.deepEqual(
    loadSettings({ VOICE_TURN_DETECTION: 'model', VOICE_TURN_PAUSE_MS: '300', VOICE_TURN_MAX_MS: '3000' })
      .media.turnDetection,
    { mode: 'model', pauseMs: 300, maxMs: 3000 },
  );
  assert.throws(
    () => loadSettings({ VOICE_TURN_DETECTION: 'smart' }),
    /VOICE_TURN_DETECTION must be model or silence; got "smart"/,
  );
  assert.throws(
    () => loadSettings({ VOICE_TURN_PAUSE_MS: '100' }),
    /VOICE_TURN_PAUSE_MS must be at least 200/,
  );
  assert.throws(
    () => loadSettings({ VOICE_TURN_PAUSE_MS: '2500', VOICE_TURN_MAX_MS: '2000' }),
    /VOICE_TURN_PAUSE_MS must be at least 200 and below VOICE_TURN_MAX_MS \(2000\)/,
  );
  assert.throws(
    () => loadSettings({ VOICE_TURN_MAX_MS: '0' }),
    /VOICE_TURN_MAX_MS must be a positive number/,
  );
});
