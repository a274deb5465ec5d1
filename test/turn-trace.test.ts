import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CallerSpeech, GatewayTurn } from '../lib/temporal/call-messages.js';
import { flushTracing, startTracing, stopTracing } from '../lib/tracing/tracing.js';
import { mediaPathCalls, ScriptedRuntime } from './support/media-path.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './support/otlp-receiver.js';
import { until } from './support/wait-for.js';

// Where a slow turn waits (issue 31): each turn the media gateway takes is one span, `conversation
// turn`, from the end of the person's speech (not from when the gateway got round to it) to the
// answer, with the transcription as an event and the turn's requests as its children. Exported
// over OTLP/HTTP as an operator's collector receives it; the call's media path on the fakes of
// test/support/media-path.ts.

let receiver: OtlpReceiver;
let spans: ReceivedSpan[] = [];
const paths = mediaPathCalls();

before(async () => {
  receiver = await startOtlpReceiver();
  spans = receiver.spans;
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
  assert.equal(startTracing('turn-trace-test'), true);
});

after(async () => {
  await stopTracing();
  receiver?.close();
});

const attribute = (span: ReceivedSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return (
    value?.stringValue ??
    value?.boolValue ??
    (value?.intValue !== undefined ? Number(value.intValue) : undefined)
  );
};
const ms = (unixNano: string) => Number(BigInt(unixNano) / 1_000_000n);

test('each turn the gateway takes is one span from the end of the person’s speech to the answer, its transcription an event', async () => {
  const startedAt = Date.now();
  const path = await paths.start({
    runtime: new ScriptedRuntime(() => ({
      say: 'Of course. Which address should I use?',
      next: { kind: 'continue' },
    })),
  });
  assert.deepEqual(await path.takeTurns(), { turns: 'taken' });
  path.says('Can you send me the details by email', 1200);
  path.silence(800);
  const turns = () =>
    path.signals.filter((s) => s.name === 'gatewayTurn').map((s) => s.args[0] as GatewayTurn);
  await until(() => turns().length === 1, 'the turn was not answered');
  await flushTracing();
  await until(() => spans.some((s) => s.name === 'conversation turn'), 'no turn span was exported');
  const span = spans.find((s) => s.name === 'conversation turn')!;
  assert.equal(attribute(span, 'call.id'), path.callId);
  assert.equal(attribute(span, 'turn.utterance'), 0);
  assert.equal(attribute(span, 'turn.answered'), true);
  // It begins where the person stopped speaking (on the call's audio clock: the harness feeds audio
  // faster than real time, so here that is ahead of the wall clock), its transcription an event.
  const transcribed = span.events?.find((event) => event.name === 'transcribed');
  assert.ok(transcribed, 'the transcription is an event of the span');
  const expectedStart = path.startedAt + 1200;
  assert.ok(
    Math.abs(ms(span.startTimeUnixNano) - expectedStart) < 300,
    `${ms(span.startTimeUnixNano)} vs ${expectedStart}`,
  );
  assert.ok(ms(span.endTimeUnixNano) >= startedAt && ms(transcribed.timeUnixNano) >= startedAt);
});

test('a turn the workflow takes (the turns are not the gateway’s) has no gateway span', async () => {
  const before = spans.filter((s) => s.name === 'conversation turn').length;
  const path = await paths.start();
  path.says('Hello there', 800);
  path.silence(800);
  await until(
    () => path.signals.some((s) => s.name === 'callerSpeech' && (s.args[0] as CallerSpeech).text.length > 0),
    'the line was not sent to the workflow',
  );
  await flushTracing();
  assert.equal(spans.filter((s) => s.name === 'conversation turn').length, before);
});
