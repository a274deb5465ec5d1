import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallAudio } from '../media/call-audio.js';
import { CallSessions } from '../media/call-sessions.js';

// The calls a gateway holds (media/call-sessions.ts): one stream per call, claimed at once.

function session(
  callId: string,
  told: Promise<void> = Promise.resolve(),
): { audio: CallAudio; end: () => void } {
  let end = () => {};
  const ended = new Promise<void>((resolve) => {
    end = resolve;
  });
  return { audio: { callId, ended, told: () => told } as unknown as CallAudio, end };
}

test('one stream per call: a second claim fails while the first opens and once it holds the call', () => {
  const sessions = new CallSessions();
  const first = sessions.claim('call-1');
  assert.ok(first, 'the first stream claims the call');
  assert.equal(sessions.claim('call-1'), null, 'a second stream racing the first is refused');
  assert.ok(sessions.claim('call-2'), 'another call is not affected');
  sessions.add(session('call-1').audio);
  assert.equal(sessions.claim('call-1'), null, 'a call that has its stream is refused too');
});

test('a claim whose audio failed to open is released: the call can be claimed again', () => {
  const sessions = new CallSessions();
  const release = sessions.claim('call-1')!;
  release();
  assert.ok(sessions.claim('call-1'));
});

test('once the call’s audio ends, it is neither held nor claimed', async () => {
  const sessions = new CallSessions();
  sessions.claim('call-1');
  const { audio, end } = session('call-1');
  sessions.add(audio);
  assert.equal(sessions.get('call-1'), audio);
  end();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(sessions.get('call-1'), undefined);
  assert.ok(sessions.claim('call-1'));
});

test('a call counts as live until its audio is over and its workflow was told all: a drain waits for both', async () => {
  const sessions = new CallSessions();
  let toldAll!: () => void;
  const call = session('call-9', new Promise<void>((resolve) => (toldAll = resolve)));
  sessions.claim('call-9');
  assert.equal(sessions.live, 1, 'claimed, its audio opening');
  sessions.add(call.audio);
  assert.equal(sessions.live, 1);
  call.end();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(sessions.get('call-9'), undefined, 'its audio is released');
  assert.equal(sessions.live, 1, 'its last signals are still on their way');
  toldAll();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(sessions.live, 0);
});
