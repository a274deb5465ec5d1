import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readMediaCommand, readMediaCommandAnswer } from '../lib/media/media-command-schema.js';
import { answerOnceEnded, type MediaCommand } from '../lib/media/media-control.js';
import { readSipCallback, type SipCallback } from '../lib/media/sip-callback-schema.js';

// What the media gateway's control port takes, checked whole against JSON Schema and never cast:
// the carrier's commands (media/control-api.ts) and the SIP side's callbacks
// (media/carrier-callbacks.ts); each answers 400 with the error otherwise.

test('every command the carrier sends is read as it is', () => {
  const commands: MediaCommand[] = [
    { type: 'answer', callWorkflowId: 'call-5f0c' },
    { type: 'connect_agent', opening: null },
    { type: 'connect_agent', opening: { index: 0, text: 'Hello, this is Ada.' } },
    { type: 'sentence', index: 2, seq: 0, text: 'Sure.' },
    { type: 'say', index: 2, text: 'Sure. Anything else?' },
    { type: 'say', index: 4, text: 'Goodbye!', hangUp: true },
    { type: 'digits', index: 3, digits: '12w#' },
    { type: 'transfer', to: '+4722334455' },
    { type: 'release', reason: 'cancel' },
    { type: 'take_turns', nextIndex: 1, heardThrough: -1, withStoredToolCalls: false },
  ];
  for (const command of commands) assert.deepEqual(readMediaCommand(command), { command });
});

test('anything else is refused with what was wrong: the type, a field missing, mistyped or extra', () => {
  const refusals: [unknown, RegExp][] = [
    [null, /body/],
    ['say', /body/],
    [{}, /type/],
    [{ type: 'explode' }, /type/],
    [{ type: 'say', index: 1 }, /text/],
    [{ type: 'say', index: -1, text: 'x' }, /index/],
    [{ type: 'say', index: 1, text: 'x', volume: 11 }, /volume/],
    [{ type: 'transfer', to: 'sip:someone@example.com' }, /to/],
    [{ type: 'digits', index: 1, digits: '1;rm' }, /digits/],
    [{ type: 'release', reason: 'because' }, /reason/],
    [{ type: 'connect_agent', opening: { index: 0 } }, /opening/],
    [{ type: 'take_turns', nextIndex: 1, heardThrough: -2, withStoredToolCalls: false }, /heardThrough/],
  ];
  for (const [body, field] of refusals) {
    const read = readMediaCommand(body);
    assert.ok('error' in read, `${JSON.stringify(body)} was read as a command`);
    assert.match(read.error, field, `${JSON.stringify(body)}: ${read.error}`);
  }
});

test('the gateway’s answers are read by their command’s type; anything else is refused, never cast', () => {
  const answers: [MediaCommand['type'], unknown][] = [
    ['answer', {}],
    ['sentence', {}],
    ['say', { firstAudioAt: 1_764_000_000_000 }],
    ['say', { firstAudioAt: null }],
    ['transfer', { transfer: 'reported' }],
    ['transfer', { transfer: 'handed_over' }],
    ['transfer', { transfer: 'refused' }],
    ['take_turns', { turns: 'not_now' }],
    ['release', {}],
  ];
  for (const [type, answer] of answers) assert.deepEqual(readMediaCommandAnswer(type, answer), { answer });
  const refusals: [MediaCommand['type'], unknown, RegExp][] = [
    ['say', {}, /firstAudioAt/],
    ['say', { firstAudioAt: '12' }, /firstAudioAt/],
    ['transfer', { transfer: 'connected' }, /transfer/],
    ['take_turns', { turns: 'taken', extra: 1 }, /extra/],
    ['release', { ok: true }, /ok/],
    ['answer', null, /body/],
  ];
  for (const [type, answer, why] of refusals) {
    const read = readMediaCommandAnswer(type, answer);
    assert.ok('error' in read, `${type} ${JSON.stringify(answer)} was taken`);
    assert.match(read.error, why);
  }
  // A command that came as the call's audio was ending gets an answer of its own kind too.
  for (const command of [
    { type: 'say', index: 1, text: 'Late.' },
    { type: 'transfer', to: '+4722334455' },
    { type: 'take_turns', nextIndex: 3, heardThrough: 1, withStoredToolCalls: false },
    { type: 'release', reason: 'hang_up' },
  ] as const) {
    assert.ok('answer' in readMediaCommandAnswer(command.type, answerOnceEnded(command)), command.type);
  }
});

test('the SIP side’s callbacks are read as they are; anything else is refused with what was wrong', () => {
  const callbacks: SipCallback[] = [
    { type: 'ringing' },
    { type: 'answered' },
    { type: 'answered', speaking: false },
    { type: 'busy' },
    { type: 'declined' },
    { type: 'not_connected' },
    { type: 'transfer_ended', seconds: 12.4 },
    { type: 'transfer_connected' },
    { type: 'transfer_failed', failure: 'no_answer' },
  ];
  for (const callback of callbacks) assert.deepEqual(readSipCallback(callback), { callback });
  const refusals: [unknown, RegExp][] = [
    [{ type: 'hung_up', atSeconds: 3 }, /type/],
    [{ type: 'transfer_ended' }, /seconds/],
    [{ type: 'transfer_ended', seconds: -1 }, /seconds/],
    [{ type: 'transfer_ended', seconds: '9' }, /seconds/],
    [{ type: 'transfer_ended', seconds: 86_401 }, /seconds/],
    [{ type: 'transfer_failed', failure: 'not_allowed' }, /failure/],
    [{ type: 'answered', speaking: 'yes' }, /speaking/],
    [{ type: 'busy', reason: 486 }, /reason/],
  ];
  for (const [body, field] of refusals) {
    const read = readSipCallback(body);
    assert.ok('error' in read, `${JSON.stringify(body)} was read as a callback`);
    assert.match(read.error, field, `${JSON.stringify(body)}: ${read.error}`);
  }
});
