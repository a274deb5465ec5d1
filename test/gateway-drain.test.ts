import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadSettings } from '../lib/settings.js';
import { GatewayDrain } from '../media/gateway-drain.js';

// The drain's own rules (telephony spec section 5); the drain of a real gateway with a live call
// is in test/media-gateway.test.ts ("draining").

test('a drain begins once, and waits for the last call or its limit, whichever comes first', async () => {
  const drain = new GatewayDrain();
  assert.equal(drain.draining, false);
  drain.begin();
  drain.begin();
  assert.equal(drain.draining, true);
  const sessions = { live: 2 };
  assert.equal(await drain.untilIdle(sessions, 50), 'timed_out');
  setTimeout(() => {
    sessions.live = 0;
  }, 100);
  const started = Date.now();
  assert.equal(await drain.untilIdle(sessions, 10_000), 'idle');
  assert.ok(Date.now() - started < 5_000);
  assert.equal(await drain.untilIdle({ live: 0 }, 0), 'idle');
});

test('MEDIA_DRAIN_SECONDS: 900 unless set; a value that is not a positive number stops the start', () => {
  assert.equal(loadSettings({}).media.drainSeconds, 900);
  assert.equal(loadSettings({ MEDIA_DRAIN_SECONDS: '30' }).media.drainSeconds, 30);
  for (const wrong of ['0', '-5', 'soon']) {
    assert.throws(
      () => loadSettings({ MEDIA_DRAIN_SECONDS: wrong }),
      /MEDIA_DRAIN_SECONDS must be a positive number/,
    );
  }
});
