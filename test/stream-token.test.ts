import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  looksLikeStreamToken,
  STREAM_TOKEN_GRACE_SECONDS,
  streamTokenFor,
  streamTokenOpens,
} from '../lib/media/stream-token.js';
import { loadSettings } from '../lib/settings.js';

// A call's own stream token (telephony spec section 3) and the media gateway's control settings.

const KEY = 'media-control-token-for-tests';
const CALL = '0b6c6a52-5a43-4c3e-9d52-0c7f4f1f3f10';
const OTHER = '4f0e2a8e-9a55-4a5c-b1a4-8a2c1e6f9d21';
const DIALED_AT = Date.parse('2026-11-28T10:00:00Z');

describe('a call’s own stream token', () => {
  test('opens its call until the ring timeout plus 60 s after the dial, and nothing after', () => {
    const token = streamTokenFor(KEY, CALL, 30, DIALED_AT);
    assert.match(token, /^cst1\.\d+\.[A-Za-z0-9_-]{43}$/);
    const last = DIALED_AT + (30 + STREAM_TOKEN_GRACE_SECONDS) * 1000 - 1;
    assert.equal(streamTokenOpens(KEY, token, CALL, DIALED_AT), true);
    assert.equal(streamTokenOpens(KEY, token, CALL, last), true);
    assert.equal(streamTokenOpens(KEY, token, CALL, last + 1), false, 'expired');
    assert.equal(looksLikeStreamToken(token, last), true);
    assert.equal(looksLikeStreamToken(token, last + 1), false);
  });

  test('opens no other call, is made with the control token only, and cannot be altered', () => {
    const token = streamTokenFor(KEY, CALL, 30, DIALED_AT);
    assert.equal(streamTokenOpens(KEY, token, OTHER, DIALED_AT), false, 'another call');
    assert.equal(streamTokenOpens('another-key', token, CALL, DIALED_AT), false, 'another key');
    assert.equal(
      streamTokenOpens(KEY, streamTokenFor('another-key', CALL, 30, DIALED_AT), CALL, DIALED_AT),
      false,
    );
    // A later expiry with the same signature: the signature covers the expiry.
    const [prefix, expiry, signature] = token.split('.');
    const stretched = `${prefix}.${Number(expiry) + 3600}.${signature}`;
    assert.equal(streamTokenOpens(KEY, stretched, CALL, DIALED_AT), false);
    for (const wrong of ['', KEY, 'cst1.1.x', `${token}x`, token.toUpperCase()]) {
      assert.equal(streamTokenOpens(KEY, wrong, CALL, DIALED_AT), false, wrong);
    }
  });
});

describe('the media gateway’s control settings', () => {
  test('the control API is on loopback at MEDIA_PORT + 1 unless set; its URL follows', () => {
    const defaults = loadSettings({}).media;
    assert.deepEqual(defaults.controlListen, { host: '127.0.0.1', port: 8091 });
    assert.equal(defaults.controlUrl, 'http://127.0.0.1:8091');
    assert.equal(defaults.controlToken, undefined);
    const moved = loadSettings({ MEDIA_PORT: '9000', MEDIA_CONTROL_TOKEN: 'c' }).media;
    assert.deepEqual(
      [moved.controlListen, moved.controlUrl, moved.controlToken],
      [{ host: '127.0.0.1', port: 9001 }, 'http://127.0.0.1:9001', 'c'],
    );
    const everywhere = loadSettings({ MEDIA_CONTROL_LISTEN: '0.0.0.0:7000' }).media;
    assert.equal(everywhere.controlUrl, 'http://127.0.0.1:7000', 'a wildcard host is reached on loopback');
    const compose = loadSettings({
      MEDIA_CONTROL_LISTEN: 'media:8091',
      MEDIA_CONTROL_URL: 'http://media:8091/',
    }).media;
    assert.deepEqual([compose.controlListen.host, compose.controlUrl], ['media', 'http://media:8091']);
    assert.throws(
      () => loadSettings({ MEDIA_CONTROL_LISTEN: '8091' }),
      /MEDIA_CONTROL_LISTEN must be HOST:PORT/,
    );
    assert.throws(() => loadSettings({ MEDIA_CONTROL_URL: 'media:8091' }), /MEDIA_CONTROL_URL must be/);
  });
  test('MEDIA_IDLE_TIMEOUT_MS: 10000 unless set; a value that is not a positive number stops the start', () => {
    assert.equal(loadSettings({}).media.idleTimeoutMs, 10_000);
    assert.equal(loadSettings({ MEDIA_IDLE_TIMEOUT_MS: '4000' }).media.idleTimeoutMs, 4_000);
    for (const wrong of ['0', '-1', 'soon']) {
      assert.throws(
        () => loadSettings({ MEDIA_IDLE_TIMEOUT_MS: wrong }),
        /MEDIA_IDLE_TIMEOUT_MS must be a positive number/,
      );
    }
  });
  test('the gateway refuses to start when MEDIA_CONTROL_TOKEN equals MEDIA_STREAMS_TOKEN, naming it', async () => {
    // media/main.ts itself (its check runs before it connects to anything), everything else set.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      MEDIA_STREAMS_TOKEN: 'one-secret-for-both',
      MEDIA_CONTROL_TOKEN: 'one-secret-for-both',
      VOICE_STT_URL: 'http://127.0.0.1:1/v1',
      VOICE_TTS_URL: 'http://127.0.0.1:1/v1',
    };
    if (process.env.NODE_COMPILE_CACHE) env.NODE_COMPILE_CACHE = process.env.NODE_COMPILE_CACHE;
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', 'media/main.ts'],
        { cwd: fileURLToPath(new URL('..', import.meta.url)), env, timeout: 60_000 },
        (_error, out) => resolve({ code: child.exitCode, stdout: out }),
      );
    });
    assert.equal(code, 1, stdout);
    const line = stdout
      .split('\n')
      .filter(Boolean)
      .map((text) => JSON.parse(text))
      .find((entry) => entry.level === 'error');
    assert.equal(line?.msg, 'the media gateway needs these settings (npm start sets them)', stdout);
    assert.deepEqual(line.missing, ['MEDIA_CONTROL_TOKEN different from MEDIA_STREAMS_TOKEN']);
  });
});
