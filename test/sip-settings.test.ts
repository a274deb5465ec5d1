import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadSettings } from '../lib/settings.js';
import { sipAddress } from '../scripts/sip-side.js';

// The SIP side's settings (voice-media v1 section 6, docs/sip.md) as lib/settings.ts reads
// them, and the address `npm start` prints.

test('CARRIER=sip and the SIP settings: defaults, values, and refusals by name', () => {
  const defaults = loadSettings({});
  assert.equal(defaults.media.carrier, 'simulator');
  assert.deepEqual(defaults.media.sip, {
    // Loopback by default (telephony spec section 2): a public address goes with SIP_TRUSTED_SOURCES.
    listen: { host: '127.0.0.1', port: 5060 },
    publicHost: '127.0.0.1',
    trunkUri: undefined,
    username: undefined,
    password: undefined,
    rtpPorts: { first: 20000, last: 20999 },
    controlUrl: 'http://127.0.0.1:8092',
    controlToken: undefined,
  });
  assert.equal(sipAddress(defaults), 'udp://127.0.0.1:5060');

  const set = loadSettings({
    CARRIER: 'sip',
    SIP_LISTEN: '10.0.0.5:5080',
    SIP_PUBLIC_HOST: 'sip.example.net',
    SIP_TRUNK_URI: 'sip:trunk.example.net:5060',
    SIP_USERNAME: 'user',
    SIP_PASSWORD: 'secret',
    RTP_PORTS: '30000-30099',
  });
  assert.equal(set.media.carrier, 'sip');
  assert.deepEqual(set.media.sip.listen, { host: '10.0.0.5', port: 5080 });
  assert.equal(set.media.sip.trunkUri, 'sip:trunk.example.net:5060');
  assert.deepEqual(set.media.sip.rtpPorts, { first: 30000, last: 30099 });
  assert.equal(sipAddress(set), 'udp://sip.example.net:5080');

  assert.throws(() => loadSettings({ CARRIER: 'pstn' }), /CARRIER must be simulator or sip/);
  assert.throws(() => loadSettings({ SIP_LISTEN: '5060' }), /SIP_LISTEN must be HOST:PORT/);
  assert.throws(() => loadSettings({ RTP_PORTS: '20000' }), /RTP_PORTS/);
  assert.throws(
    () => loadSettings({ SIP_TRUNK_URI: 'trunk.example.net' }),
    /SIP_TRUNK_URI must be a SIP URI/,
  );
});

test('TRANSFER_MAX_MINUTES, read by the gateway as the SIP side reads it: above 0, at most a day', () => {
  assert.equal(loadSettings({}).media.transferMaxMinutes, 60);
  assert.equal(loadSettings({ TRANSFER_MAX_MINUTES: '' }).media.transferMaxMinutes, 60);
  assert.equal(loadSettings({ TRANSFER_MAX_MINUTES: '0.5' }).media.transferMaxMinutes, 0.5);
  assert.equal(loadSettings({ TRANSFER_MAX_MINUTES: '1440' }).media.transferMaxMinutes, 1440);
  for (const value of ['0', '-5', 'soon', 'Infinity']) {
    assert.throws(
      () => loadSettings({ TRANSFER_MAX_MINUTES: value }),
      new RegExp(`TRANSFER_MAX_MINUTES must be a positive number, got "${value}"`),
    );
  }
  assert.throws(
    () => loadSettings({ TRANSFER_MAX_MINUTES: '1441' }),
    /TRANSFER_MAX_MINUTES must be at most 1440, got "1441"/,
  );
});
