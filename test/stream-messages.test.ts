import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readClientMessage } from '../media/stream-messages.js';

// What the gateway reads of a Media Streams client's messages (media/stream-messages.ts).

test("a key pressed is Twilio's dtmf message; anything but one key of a keypad is ignored", () => {
  const dtmf = (dtmf: unknown) =>
    readClientMessage(JSON.stringify({ event: 'dtmf', streamSid: 'MZ1', dtmf }));
  for (const digit of ['0', '5', '9', '*', '#', 'A', 'D']) {
    assert.deepEqual(dtmf({ track: 'inbound_track', digit }), { event: 'dtmf', digit });
  }
  for (const digit of ['', '12', 'x', 'E', 5, null]) assert.equal(dtmf({ digit }), null, `digit ${digit}`);
  assert.equal(dtmf(undefined), null);
  assert.equal(dtmf('5'), null);
});

test("the SIP side's answer to `bridge` is read whole: the leg's call id and whether it joined it", () => {
  const bridged = (bridged: unknown) =>
    readClientMessage(JSON.stringify({ event: 'bridged', streamSid: 'MZ1', bridged }));
  assert.deepEqual(bridged({ callId: 'leg-1', joined: true }), {
    event: 'bridged',
    callId: 'leg-1',
    joined: true,
  });
  assert.deepEqual(bridged({ callId: 'leg-1', joined: false }), {
    event: 'bridged',
    callId: 'leg-1',
    joined: false,
  });
  for (const wrong of [
    undefined,
    null,
    'yes',
    { callId: 'leg-1' },
    { joined: true },
    { callId: 7, joined: true },
  ])
    assert.equal(bridged(wrong), null, JSON.stringify(wrong));
});
