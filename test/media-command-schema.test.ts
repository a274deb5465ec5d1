import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readMediaCommand } from '../lib/media/media-command-schema.js';
import type { MediaCommand } from '../lib/media/media-control.js';

// The media gateway's control commands checked whole against their JSON Schema (media/control-api.ts
// answers 400 with the error), never cast.

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
