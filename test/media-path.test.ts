import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { TranscriptEntry } from '../db/entities/index.js';
import { encodeMulaw } from '../lib/audio/mulaw.js';
import { toMulawFrames } from '../lib/audio/phone-frames.js';
import { watchGatewayCalls } from '../lib/metrics/gateway-metrics.js';
import { metricsRegistry } from '../lib/metrics/service-metrics.js';
import type { GatewayTurn } from '../lib/temporal/call-messages.js';
import { REJUDGE_LIMIT_MS } from '../media/interruptions.js';
import {
  type MediaPathCall,
  mediaPathCalls,
  ScriptedRuntime,
  type startMediaPathCall,
} from './support/media-path.js';
import { until } from './support/wait-for.js';

// One call's media path (media/call-audio.ts) on fakes at its ports (test/support/media-path.ts):
// the rules of hearing a turn's end ahead and answering it, asserted as an order of events the test
// sets up (where the transcription ends against the turn's end), never as a model's speed.

const paths = mediaPathCalls();

function call(options: Parameters<typeof startMediaPathCall>[1] = {}): Promise<MediaPathCall> {
  return paths.start(options);
}

const ASK = 'Can you send me the details by email';
const ANSWER = { say: 'Of course. Which address should I use?', next: { kind: 'continue' } } as const;

/** Until the detector has ended `count` turns on the call. */
function turnsEnded(call: MediaPathCall, count: number): Promise<void> {
  return until(() => call.turnEvents.filter((type) => type === 'turn_ended').length === count, 'no turn end');
}

/** The agent goes on talking, was never stopped, and the speech over it became no line (`why`). */
async function wentOnUnstopped(call: MediaPathCall, why: string): Promise<void> {
  const frames = call.out.frames;
  await until(() => call.out.frames > frames + 10, 'the agent did not go on speaking');
  assert.equal(call.out.clears, 0, 'the agent was not stopped');
  assert.equal(gatewayTurns(call).length, 1, why);
}

function gatewayTurns(call: MediaPathCall): GatewayTurn[] {
  return call.signals.filter((s) => s.name === 'gatewayTurn').map((s) => s.args[0] as GatewayTurn);
}

describe('hearing the turn end ahead (preemptive generation)', () => {
  test('a transcription that ends during the pause: the answer is asked before the turn ends, and the turn takes it', async () => {
    const path = await call({ endpointingMs: 600, runtime: new ScriptedRuntime(() => ANSWER) });
    assert.deepEqual(await path.takeTurns(), { turns: 'taken' });
    path.says(ASK, 1200);
    // 300 ms of silence: past the 200 ms pause, short of the 600 ms that end the turn.
    path.silence(300);
    await until(() => path.runtime.requests.length === 1, 'the model was not asked during the pause');
    assert.equal(path.runtime.requests[0].turnsEnded, 0, 'asked before the turn ended');
    assert.deepEqual(path.runtime.requests[0].lines, [`caller: ${ASK}`]);

    path.silence(400);
    await until(() => gatewayTurns(path).length === 1, 'the turn was not answered');
    // Asked once: the turn took the answer begun at the pause, and the pause's transcription.
    assert.equal(path.runtime.requests.length, 1);
    assert.equal(path.stt.requests.length, 1);
    assert.equal(path.runtime.requests[0].aborted, false);
    const [turn] = gatewayTurns(path);
    assert.equal(turn.heard.text, ASK);
    assert.equal(turn.result?.line?.text, ANSWER.say);
    assert.deepEqual(path.audio.answersAhead, { taken: 1, dropped: 0 });
    await until(() => path.out.frames > 0, 'the answer was not played');
  });

  test('a transcription slower than the endpointing wait: nothing is asked ahead, the turn is still answered once', async () => {
    const path = await call({ endpointingMs: 600, runtime: new ScriptedRuntime(() => ANSWER) });
    await path.takeTurns();
    const release = path.stt.hold();
    path.says(ASK, 1200);
    path.silence(300);
    await until(() => path.stt.requests.length === 1, 'the pause was not transcribed');
    // The turn ends while the pause's transcription is still under way.
    path.silence(400);
    await until(() => path.turnEvents.includes('turn_ended'), 'the turn did not end');
    release();
    await until(() => gatewayTurns(path).length === 1, 'the turn was not answered');
    assert.equal(path.runtime.requests[0].turnsEnded, 1, 'asked once the turn had ended');
    // The turn waited for the pause's transcription (same audio) instead of asking for another.
    assert.equal(path.stt.requests.length, 1);
    assert.equal(path.runtime.requests.length, 1);
    assert.deepEqual(path.audio.answersAhead, { taken: 0, dropped: 0 });
    assert.equal(gatewayTurns(path)[0].result?.line?.text, ANSWER.say);
  });

  test('the caller goes on after the pause: the answer asked ahead is dropped and the whole line asked anew', async () => {
    const path = await call({ endpointingMs: 600, runtime: new ScriptedRuntime(() => ANSWER) });
    await path.takeTurns();
    path.says(ASK, 1200);
    path.silence(300);
    await until(() => path.runtime.requests.length === 1, 'the model was not asked during the pause');
    path.says('on Tuesday', 600);
    path.silence(700);
    await until(() => gatewayTurns(path).length === 1, 'the turn was not answered');
    // The second pause asked again, with the whole line, and that answer is the turn's.
    assert.equal(path.runtime.requests.length, 2);
    assert.equal(path.runtime.requests[0].aborted, true, 'the request begun ahead was aborted');
    assert.deepEqual(path.runtime.requests[1].lines, [`caller: ${ASK} on Tuesday`]);
    assert.equal(path.runtime.requests[1].turnsEnded, 0);
    assert.equal(path.runtime.requests[1].aborted, false);
    assert.equal(gatewayTurns(path)[0].heard.text, `${ASK} on Tuesday`);
    assert.deepEqual(path.audio.answersAhead, { taken: 1, dropped: 1 });
  });

  test('a pause’s transcription the caller went on from is aborted: it would only take the speech server’s time', async () => {
    const path = await call({ endpointingMs: 600 });
    const release = path.stt.hold();
    path.says(ASK, 1200);
    path.silence(300);
    await until(() => path.stt.requests.length === 1, 'the pause was not transcribed ahead');
    path.says('on Tuesday', 600);
    path.silence(700);
    release();
    await until(() => path.signals.some((s) => s.name === 'callerSpeech'), 'the turn was not sent');
    assert.equal(path.stt.requests[0].aborted, true, 'the first pause’s transcription was aborted');
    assert.equal(path.stt.requests.at(-1)?.aborted, false, 'the turn’s own was not');
    const speech = path.signals.find((s) => s.name === 'callerSpeech')!.args[0] as { text: string };
    assert.equal(speech.text, `${ASK} on Tuesday`);
  });

  test('VOICE_PREEMPTIVE_GENERATION=false: the pause is transcribed ahead, the model asked only after the turn', async () => {
    const path = await call({
      endpointingMs: 600,
      preemptiveGeneration: false,
      runtime: new ScriptedRuntime(() => ANSWER),
    });
    await path.takeTurns();
    path.says(ASK, 1200);
    path.silence(300);
    await until(() => path.stt.requests.length === 1 && path.stt.requests[0].answered, 'no transcription');
    path.silence(400);
    await until(() => gatewayTurns(path).length === 1, 'the turn was not answered');
    assert.equal(path.runtime.requests.length, 1);
    assert.equal(path.runtime.requests[0].turnsEnded, 1, 'asked only once the turn had ended');
    assert.equal(path.stt.requests.length, 1, "the turn took the pause's transcription");
    assert.deepEqual(path.audio.answersAhead, { taken: 0, dropped: 0 });
  });

  test('while the workflow holds the turns, the line goes to it and nothing is asked ahead', async () => {
    const path = await call({ endpointingMs: 600 });
    path.says(ASK, 1200);
    path.silence(900);
    await until(() => path.signals.some((s) => s.name === 'callerSpeech'), 'the line was not sent');
    assert.equal(path.runtime.requests.length, 0);
    const [speech] = path.signals.filter((s) => s.name === 'callerSpeech').map((s) => s.args[0]);
    assert.equal((speech as { text: string }).text, ASK);
  });
});

describe('the caller speaks on before hearing the answer (an afterthought)', () => {
  const TAXI = 'I need a taxi';
  const WHERE = { say: 'Where would you like to go?', next: { kind: 'continue' } } as const;
  const BOOKED = { say: 'A taxi to the airport at six, booked.', next: { kind: 'continue' } } as const;

  /** The caller's line ended and its answer asked, the model holding it back until `release`. */
  async function answerComing() {
    const runtime = new ScriptedRuntime((heard) => (heard === TAXI ? WHERE : BOOKED));
    const path = await call({ endpointingMs: 600, runtime });
    await path.takeTurns();
    const release = runtime.holdAnswers();
    path.says(TAXI, 1000);
    path.silence(700);
    await until(() => runtime.requests.length === 1 && path.turnEvents.includes('turn_ended'), 'not asked');
    return { path, release };
  }

  /** The caller speaks on (`then`) before the answer comes; it comes while they speak. */
  async function spokeOn(then: string) {
    const { path, release } = await answerComing();
    path.says(then, 900);
    await until(
      () => path.turnEvents.filter((type) => type === 'speech_confirmed').length === 2,
      'not heard',
    );
    // The answer comes while they speak: it waits.
    release();
    await until(() => path.tts.spoken.includes(WHERE.say), 'the answer was not made');
    await sleep(100);
    assert.equal(path.out.frames, 0, 'nothing of the answer played over the caller');
    path.silence(700);
    return path;
  }

  async function transcript(path: MediaPathCall) {
    const lines = await paths
      .db()
      .orm.em.fork()
      .find(TranscriptEntry, { call: path.callId }, { orderBy: { index: 'asc' } });
    return lines.map((line) => [line.index, line.role, line.text]);
  }

  test('words of a line of their own: the waiting answer is dropped unheard, and the next one answers both lines', async () => {
    const path = await spokeOn('To the airport at six');
    await until(() => gatewayTurns(path).length === 2, 'the second line was not answered');
    const [first, second] = gatewayTurns(path);
    assert.equal(first.result?.line?.text, WHERE.say);
    assert.deepEqual(second.interrupted, { index: 1, spokenText: '' }, 'the first answer was never heard');
    // The model is asked with both of the caller's lines, without the answer they never heard.
    assert.deepEqual(path.runtime.requests.at(-1)?.lines, [
      `caller: ${TAXI}`,
      'caller: To the airport at six',
    ]);
    await until(() => path.out.marks.includes('agent-3-0'), 'the answer to both was not played');
    assert.ok(!path.out.marks.some((mark) => mark.startsWith('agent-1-')), 'the dropped answer never played');
    // The transcript is every line spoken: the dropped answer is not in it.
    assert.deepEqual(await transcript(path), [
      [0, 'caller', TAXI],
      [2, 'caller', 'To the airport at six'],
      [3, 'agent', BOOKED.say],
    ]);
  });

  test('a sound too short to be speech (a breath, a click) holds nothing: the answer plays as it comes', async () => {
    const { path, release } = await answerComing();
    // 100 ms of sound: the detector dismisses it without a turn's end.
    path.says('click', 100);
    path.silence(300);
    await until(() => path.turnEvents.filter((type) => type === 'speech_started').length === 2, 'not heard');
    release();
    await until(() => path.out.marks.includes('agent-1-0'), 'the answer was held by a click');
    assert.equal(gatewayTurns(path).length, 1);
  });

  test('only "go on" ("okay", a cough with no words): the waiting answer plays, and that is no line', async () => {
    const path = await spokeOn('Okay');
    await until(() => path.out.marks.includes('agent-1-0'), 'the waiting answer was not played');
    await sleep(200);
    assert.equal(gatewayTurns(path).length, 1, '"okay" was no line');
    assert.equal(path.runtime.requests.length, 1);
    assert.deepEqual(await transcript(path), [
      [0, 'caller', TAXI],
      [1, 'agent', WHERE.say],
    ]);
  });
});

describe('the caller’s audio in messages of any length', () => {
  test('messages of 10 to 100 ms count as long as they are: a turn’s times are the audio’s', async () => {
    const path = await call({});
    const feed = (samples: Int16Array, ms: number) => {
      for (let at = 0; at < samples.length; at += ms * 8)
        path.audio.hear(encodeMulaw(samples.subarray(at, at + ms * 8)));
    };
    feed(new Int16Array(8000), 100); // 1 s of silence, in 100 ms messages
    feed(path.phrases.audio(ASK, 2000), 40); // 2 s of speech, in 40 ms messages
    feed(new Int16Array(8000), 10); // 1 s of silence, in 10 ms messages
    await until(() => path.signals.some((s) => s.name === 'callerSpeech'), 'the turn did not end');
    const speech = path.signals.find((s) => s.name === 'callerSpeech')!.args[0] as {
      text: string;
      startedAtSeconds: number;
      endedAtSeconds: number;
    };
    assert.equal(speech.text, ASK);
    assert.ok(
      Math.abs(speech.startedAtSeconds - 1) <= 0.15,
      `started at ${speech.startedAtSeconds} s, not 1 s`,
    );
    assert.ok(Math.abs(speech.endedAtSeconds - 3) <= 0.15, `ended at ${speech.endedAtSeconds} s, not 3 s`);
  });
});

describe('a caller who never stops (a television, a looped recording)', () => {
  test('each 30 s turn is cut there and only its last 12 s are transcribed; turn after turn goes to the workflow', async () => {
    const path = await call({});
    // 95 s of unbroken speech: three turns cut at the 30 s cap, and what is left.
    for (let second = 0; second < 95; second++) {
      path.says('and so on and so forth', 1000);
      // As fast as detection takes it (faster would be dropped: detection's queue is bounded).
      await until(() => path.audio.framesWaiting === 0, 'detection fell behind');
    }
    await until(
      () => path.signals.filter((s) => s.name === 'callerSpeech').length === 3,
      'three turns were not sent',
    );
    const turns = path.stt.requests.filter((request) => request.seconds > 5);
    assert.ok(turns.length >= 3, JSON.stringify(path.stt.requests));
    for (const request of turns) assert.ok(request.seconds <= 12, `${request.seconds} s transcribed at once`);
    assert.equal(path.out.clears, 0);
  });
});

describe('barge-in and hang-ups', () => {
  const LONG = {
    say: 'Our opening hours are nine to five on weekdays and ten to two on Saturdays. We are closed on Sundays and on public holidays.',
    next: { kind: 'continue' },
  } as const;
  const [FIRST_SENTENCE] = LONG.say.match(/[^.]+\./) ?? [];
  /** About 300 ms of the agent's audio (40 ms a word). */
  const QUESTION = { say: 'Shall I book Monday at ten?', next: { kind: 'continue' } } as const;

  /** A call whose agent has begun its long answer to the caller's first line. */
  /** An answer of about 5 s (40 ms of audio a word): the agent still talks through a judging that lasts seconds. */
  const LONGER = {
    say: `${LONG.say} ${LONG.say} ${LONG.say} ${LONG.say} ${LONG.say}`,
    next: { kind: 'continue' },
  } as const;

  async function agentSpeaking(
    answer: typeof LONG | typeof LONGER | typeof QUESTION = LONG,
  ): Promise<MediaPathCall> {
    const path = await call({
      runtime: new ScriptedRuntime((heard) => (heard.includes('open') ? answer : ANSWER)),
    });
    await path.takeTurns();
    path.says('When are you open', 800);
    path.silence(700);
    await until(() => path.out.frames > 0, 'the agent did not start speaking');
    return path;
  }

  test('speech over the agent stops it (clear) once 300 ms of it are heard, and its line keeps only the sentence that had started', async () => {
    const bargeIns = await metricValue('media_barge_ins_total');
    const path = await agentSpeaking();
    // 400 ms of the caller's audio and no more: the clear must come from these (the spec allows
    // 1.5 s from the caller's first word; the gateway's own part is the 300 ms it waits for).
    path.says('Sorry, what about Sundays', 400);
    await until(() => path.out.clears === 1, 'the agent was not stopped by 400 ms of speech over it');
    assert.equal((await metricValue('media_barge_ins_total')) - bargeIns, 1, 'counted as a barge-in');
    // The recording's agent channel is cut once, where the interrupted line stopped.
    assert.equal(path.recordingCuts.length, 1);
    assert.ok(path.recordingCuts[0]! > 0);
    path.says('Sorry, what about Sundays', 500);
    const framesAtClear = path.out.frames;
    path.silence(700);
    await until(() => gatewayTurns(path).length === 2, 'the line after the barge-in was not answered');
    const [, second] = gatewayTurns(path);
    assert.deepEqual(second.interrupted, { index: 1, spokenText: FIRST_SENTENCE });
    assert.equal(second.heard.text, 'Sorry, what about Sundays');
    // The answer to the new line was played after the clear.
    await until(() => path.out.frames > framesAtClear, 'the answer to the new line was not played');
    // The transcript's cut: the agent's interrupted line keeps what was heard.
    const lines = await paths
      .db()
      .orm.em.fork()
      .find(TranscriptEntry, { call: path.callId }, { orderBy: { index: 'asc' } });
    assert.deepEqual(
      lines.map((line) => [line.index, line.role, line.text]),
      [
        [0, 'caller', 'When are you open'],
        [1, 'agent', FIRST_SENTENCE],
        [2, 'caller', 'Sorry, what about Sundays'],
        [3, 'agent', ANSWER.say],
      ],
    );
  });

  test('a short sound over the agent (under 300 ms) neither stops it nor is a line', async () => {
    const path = await agentSpeaking();
    path.says('mm-hm', 200);
    path.silence(700);
    await turnsEnded(path, 2);
    await wentOnUnstopped(path, 'the short sound was no line');
  });

  test('a short word begun over the last of the agent’s line and ended in its silence (a quick “Yes.”) is a line', async () => {
    const path = await agentSpeaking(QUESTION);
    // Begun while the question still plays, too short to stop it.
    path.says('Yes', 200);
    const framesOfQuestion = path.out.frames;
    await until(() => path.out.frames > framesOfQuestion, 'the question did not go on');
    // All its 12 frames (6 words, 40 ms each) sent, and played: audio goes 100 ms ahead of its play
    // time. The word's turn then ends in the agent's silence.
    await until(() => path.out.frames === 12, 'the question was not sent whole');
    await sleep(200);
    path.silence(700);
    await until(() => gatewayTurns(path).length === 2, 'the short word was lost');
    assert.equal(path.out.clears, 0, 'nothing to stop: the agent had finished');
    assert.equal(gatewayTurns(path)[1].heard.text, 'Yes');
  });

  test('a backchannel over the agent ("mm-hm", "yeah, okay", 500 ms) neither stops it nor is a line', async () => {
    const path = await agentSpeaking();
    path.says('Mm-hmm.', 500);
    path.silence(700);
    path.says('Yeah, okay.', 500);
    path.silence(700);
    await turnsEnded(path, 3);
    await wentOnUnstopped(path, 'the backchannels were no lines');
    assert.deepEqual(path.recordingCuts, [], 'nor its recording cut');
  });

  test('speech over the agent that begins with a backchannel and goes on past 1 s stops it, and is a line', async () => {
    const path = await agentSpeaking();
    const startedAt = performance.now();
    // Its first 300 ms are heard as "Yeah" only; the speech goes on.
    path.says('Yeah', 300);
    path.says('Yeah but what about Sundays', 1200);
    await until(() => path.out.clears === 1, 'the agent was not stopped by long speech over it');
    assert.ok(
      performance.now() - startedAt < 1_500 + 500,
      'within the spec’s 1.5 s (and the harness’s own time)',
    );
    path.silence(700);
    await until(() => gatewayTurns(path).length === 2, 'the line after the barge-in was not answered');
    const [, second] = gatewayTurns(path);
    assert.equal(second.interrupted?.index, 1);
  });

  test('a backchannel said in one breath past 1 s ("yeah, okay") is heard again at that second: it neither stops the agent nor is a line', async () => {
    const path = await agentSpeaking(LONGER);
    const asked = path.stt.requests.length;
    path.says('Yeah, okay.', 1400);
    // Still speaking at its second: all its words so far are transcribed again, and still only "go on".
    const heardAgain = () =>
      path.stt.requests.slice(asked).filter((r) => r.text === 'Yeah, okay.' && r.answered);
    await until(() => heardAgain().length >= 2, 'its words were not heard again past 1 s');
    assert.ok(heardAgain()[1].seconds > heardAgain()[0].seconds, 'the second time, all its words so far');
    await sleep(REJUDGE_LIMIT_MS + 200);
    assert.equal(path.out.clears, 0, 'the agent was not stopped');
    path.silence(700);
    await turnsEnded(path, 2);
    await wentOnUnstopped(path, 'judged by its own words at its end: no line');
  });

  test('such speech whose words do not come back within 400 ms of its second stops the agent, within the spec’s 1.5 s', async () => {
    const path = await agentSpeaking(LONGER);
    const asked = path.stt.requests.length;
    const startedAt = performance.now();
    path.says('Yeah, okay.', 1400);
    await until(
      () => path.stt.requests.slice(asked).some((r) => r.answered),
      'its first words were not heard',
    );
    const release = path.stt.hold();
    await until(() => path.out.clears === 1, 'the agent was not stopped when the words came too late');
    assert.ok(
      performance.now() - startedAt < 1_500 + 500,
      'within the spec’s 1.5 s (and the harness’s own time)',
    );
    // The words heard again, late, would change nothing now: their request is dropped.
    assert.equal(path.stt.requests.at(-1)?.aborted, true, 'the late transcription was aborted');
    release();
  });

  test('such speech that pauses at its second and goes on later still stops the agent by 1.4 s from its start, not 400 ms after it went on', async () => {
    const path = await agentSpeaking(LONGER);
    const asked = path.stt.requests.length;
    const startedAt = performance.now();
    // Its first 300 ms are heard as "Yeah" only; then a pause over its second (no turn's end yet).
    path.says('Yeah', 300);
    path.silence(200);
    await until(
      () => path.stt.requests.slice(asked).some((r) => r.answered),
      'its first words were not heard',
    );
    await sleep(Math.max(0, startedAt + 1_300 - performance.now()));
    assert.equal(path.out.clears, 0, 'not stopped while it paused');
    // It goes on at 1.3 s; its words heard again do not come back.
    const release = path.stt.hold();
    const resumedAt = performance.now();
    path.says('Yeah but what about Sundays', 600);
    await until(() => path.out.clears === 1, 'the agent was not stopped');
    const stoppedAfter = performance.now() - resumedAt;
    assert.ok(
      stoppedAfter < 300,
      `stopped ${Math.round(stoppedAfter)} ms after it went on (the 1.4 s deadline, not 400 ms more)`,
    );
    release();
  });

  test('words over the agent that the speech server cannot hear in time: the turn’s own words judge it', async () => {
    const path = await agentSpeaking();
    const asked = path.stt.requests.length;
    const release = path.stt.hold();
    path.says('Mm-hmm.', 500);
    path.silence(700);
    await turnsEnded(path, 2);
    // Its first words, still being transcribed when the speech ended, are of no use now: dropped.
    assert.equal(path.stt.requests[asked]?.aborted, true, 'the judging’s transcription was aborted');
    release();
    await wentOnUnstopped(path, 'a backchannel judged by the turn’s words is no line either');
  });

  test('the caller hangs up mid-sentence: the last words are heard, then the hang-up, in that order', async () => {
    const path = await call({});
    path.says('Please call me back tomorrow', 900);
    await path.audio.callerHungUp();
    await path.audio.told();
    assert.deepEqual(
      path.signals.map((s) => s.name),
      ['callerSpeech', 'carrierCallback'],
    );
    assert.equal((path.signals[0].args[0] as { text: string }).text, 'Please call me back tomorrow');
    assert.equal((path.signals[1].args[0] as { type: string }).type, 'hung_up');
    assert.deepEqual(path.closed, { code: 1000, reason: 'stopped' });
  });

  test('the caller hangs up while Temporal is down: the audio is released at once; the last words and the hang-up follow when it is back', async () => {
    let back!: () => void;
    const path = await call({ temporalBack: new Promise<void>((resolve) => (back = resolve)) });
    path.says('Please call me back tomorrow', 900);
    await path.audio.callerHungUp();
    await path.audio.ended;
    assert.deepEqual(path.closed, { code: 1000, reason: 'stopped' });
    assert.equal(path.signals.length, 0, 'nothing reached the workflow yet');
    let told = false;
    void path.audio.told().then(() => {
      told = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(told, false, 'the outbox still holds them');
    back();
    await path.audio.told();
    assert.deepEqual(
      path.signals.map((s) => [
        s.name,
        (s.args[0] as { text?: string; type?: string }).text ?? (s.args[0] as { type: string }).type,
      ]),
      [
        ['callerSpeech', 'Please call me back tomorrow'],
        ['carrierCallback', 'hung_up'],
      ],
    );
  });
});

describe('the keypad (telephony spec section 7)', () => {
  test('keys ended by # are one caller line [keypad] …, sent to the workflow holding the turns', async () => {
    const path = await call({});
    for (const digit of '1234#') path.audio.pressed(digit);
    await until(() => path.signals.some((s) => s.name === 'callerSpeech'), 'the keypad line was not sent');
    const [speech] = path.signals.filter((s) => s.name === 'callerSpeech').map((s) => s.args[0]);
    assert.equal((speech as { text: string }).text, '[keypad] 1 2 3 4');
  });

  test('without #, 2 s after the last key end the turn; the gateway holding the turns answers it', async () => {
    const path = await call({
      runtime: new ScriptedRuntime((heard) =>
        heard.startsWith('[keypad]')
          ? { say: 'Thank you, I have your number.', next: { kind: 'continue' } }
          : ANSWER,
      ),
    });
    await path.takeTurns();
    path.audio.pressed('4');
    path.audio.pressed('2');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(gatewayTurns(path).length, 0, 'not ended a second after the last key');
    await until(() => gatewayTurns(path).length === 1, 'the keypad turn did not end');
    const [turn] = gatewayTurns(path);
    assert.equal(turn.heard.text, '[keypad] 4 2');
    assert.deepEqual(path.runtime.requests[0].lines, ['caller: [keypad] 4 2']);
  });

  test('a key while the agent speaks stops it (clear), and the agent line keeps what had started', async () => {
    const path = await call({
      runtime: new ScriptedRuntime((heard) =>
        heard.includes('open')
          ? {
              say: 'Our opening hours are nine to five on weekdays. We are closed on Sundays and on public holidays.',
              next: { kind: 'continue' },
            }
          : ANSWER,
      ),
    });
    await path.takeTurns();
    path.says('When are you open', 800);
    path.silence(700);
    await until(() => path.out.frames > 0, 'the agent did not start speaking');
    path.audio.pressed('0');
    await until(() => path.out.clears === 1, 'the key did not stop the agent');
    path.audio.pressed('#');
    await until(() => gatewayTurns(path).length === 2, 'the keypad line was not answered');
    const [, keys] = gatewayTurns(path);
    assert.equal(keys.heard.text, '[keypad] 0');
    assert.deepEqual(keys.interrupted, {
      index: 1,
      spokenText: 'Our opening hours are nine to five on weekdays.',
    });
  });
});

describe('a transfer the client tries and reports (telephony spec section 1)', () => {
  const DESK = '+4722334455';
  const carrierCallbacks = (path: MediaPathCall) =>
    path.signals.filter((s) => s.name === 'carrierCallback').map((s) => s.args[0]);

  test('the stream stays open while the target is tried, and what the caller says meanwhile is no line; failed: the workflow is told, and the caller is heard again', async () => {
    const path = await call({ reportsTransfers: true });
    assert.deepEqual(await path.audio.command({ type: 'transfer', to: DESK }), { transfer: 'reported' });
    await until(() => path.out.transfers.length === 1, 'the typed transfer was not sent');
    assert.deepEqual(path.out.transfers, [DESK]);
    path.says(ASK, 1500);
    path.silence(1000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(path.closed, null, 'the stream is not closed before the report');
    assert.equal(
      path.stt.requests.length,
      0,
      'nothing the far end heard while it was handed over is transcribed',
    );
    assert.equal(path.signals.filter((s) => s.name === 'callerSpeech').length, 0);

    await path.audio.transferReported({ connected: false, failure: 'busy' });
    assert.deepEqual(
      carrierCallbacks(path),
      [{ type: 'transfer_failed', failure: 'busy' }],
      'told before it resolves',
    );
    path.says(ASK, 1500);
    path.silence(1000);
    await until(() => path.signals.some((s) => s.name === 'callerSpeech'), 'the caller was not heard again');
    assert.equal(path.closed, null);
  });

  test('connected: the workflow is told, then the stream is closed; with a client that does not report and no leg to bridge, no transfer is made', async () => {
    const reporting = await call({ reportsTransfers: true });
    await reporting.audio.command({ type: 'transfer', to: DESK });
    await until(() => reporting.out.transfers.length === 1, 'the typed transfer was not sent');
    await reporting.audio.transferReported({ connected: true });
    assert.deepEqual(carrierCallbacks(reporting), [{ type: 'transfer_connected' }]);
    assert.deepEqual(reporting.closed, { code: 1000, reason: 'transferred' });

    // Whether the target answered could never be known: refused (telephony spec section 1), and
    // the call goes on: the stream stays open, no target is handed to the client.
    const other = await call({});
    assert.deepEqual(await other.audio.command({ type: 'transfer', to: DESK }), { transfer: 'refused' });
    other.says(ASK, 1500);
    other.silence(1000);
    await until(() => other.signals.some((s) => s.name === 'callerSpeech'), 'the caller was not heard after');
    assert.equal(other.closed, null);
    assert.deepEqual(other.out.transfers, []);
    assert.deepEqual(carrierCallbacks(other), [], 'nothing to report');
    // A bridgeable transfer of the same client is bridged instead.
    const bridgeable = await call({});
    assert.deepEqual(await bridgeable.audio.command({ type: 'transfer', to: DESK, bridgeable: true }), {
      transfer: 'bridge',
    });
  });
});

describe('who answered, heard at pick-up (telephony spec section 6, a carrier that cannot tell)', () => {
  /** `ms` of a tone at `hz` (8 kHz PCM, about -10 dBFS). */
  const tone = (hz: number, ms: number) =>
    Int16Array.from({ length: (ms * 8000) / 1000 }, (_, i) =>
      Math.round(10_000 * Math.sin((2 * Math.PI * hz * i) / 8000)),
    );
  const beeps = (path: MediaPathCall) =>
    path.signals.filter(
      (s) => s.name === 'carrierCallback' && (s.args[0] as { type: string }).type === 'beep',
    );

  test('a far end speaking from the first moment was speaking at pick-up; one silent for 600 ms was not', async () => {
    const machine = await call({ screensPickUp: true });
    const asked = machine.audio.pickUp!.speakingAtPickUp();
    machine.says('You have reached Kari, please leave a message', 2000);
    assert.equal(await asked, true);

    const person = await call({ screensPickUp: true });
    const waiting = person.audio.pickUp!.speakingAtPickUp();
    person.silence(800);
    person.says('Hello', 600);
    assert.equal(await waiting, false, 'decided by the first 600 ms, not by what came after');
  });

  test('no audio at all within 1.5 s: not known (the answer goes on without it); calls that do not screen have no screen', async () => {
    const mute = await call({ screensPickUp: true });
    const started = Date.now();
    assert.equal(await mute.audio.pickUp!.speakingAtPickUp(), null);
    assert.ok(Date.now() - started >= 1400, 'it waited for the audio');
    assert.equal((await call({})).audio.pickUp, null);
  });

  test('a greeting without a beep is over after 1 s of silence once the decision is due: its words first, then quiet, once', async () => {
    const path = await call({ screensPickUp: true });
    const quiets = () =>
      path.signals.filter(
        (s) => s.name === 'carrierCallback' && (s.args[0] as { type: string }).type === 'quiet',
      );
    path.says('Hi this is Kari', 1000);
    path.silence(1200); // a pause before the decision (3.7 s) is not the greeting's end
    path.says('leave a message', 1000);
    path.silence(1500);
    await until(() => quiets().length === 1, 'the greeting’s end was not reported');
    const order = path.signals.map((s) =>
      s.name === 'carrierCallback' ? (s.args[0] as { type: string }).type : s.name,
    );
    assert.deepEqual(order, ['callerSpeech', 'callerSpeech', 'quiet']);
    path.silence(2000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(quiets().length, 1, 'reported once');
  });

  test('the beep ends the greeting’s turn: its words go to the workflow first, then the beep, once; the greeting holds no beep', async () => {
    const path = await call({ screensPickUp: true });
    path.says('You have reached Kari please leave a message after the tone', 2500);
    assert.equal(beeps(path).length, 0, 'speech is no beep');
    for (const frame of toMulawFrames(tone(1000, 500))) path.audio.hear(frame);
    path.silence(200);
    for (const frame of toMulawFrames(tone(1000, 500))) path.audio.hear(frame);
    path.silence(200);
    await until(() => beeps(path).length === 1, 'the beep was not reported');
    const order = path.signals.map((s) => (s.name === 'carrierCallback' ? 'beep' : s.name));
    assert.deepEqual(order.slice(0, 2), ['callerSpeech', 'beep'], 'the greeting before its beep');
    assert.match((path.signals[0].args[0] as { text: string }).text, /You have reached Kari/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(beeps(path).length, 1, 'reported once');
  });

  test('a greeting whose words are slow to come (a busy speech server, past the hang-up’s 10 s limit): the beep still waits for them', async () => {
    const path = await call({ screensPickUp: true });
    const release = path.stt.hold();
    path.says('You have reached Kari please leave a message after the tone', 2500);
    for (const frame of toMulawFrames(tone(1000, 500))) path.audio.hear(frame);
    path.silence(200);
    await until(
      () => path.stt.requests.some((r) => /after the tone/.test(r.text)),
      'the greeting was not transcribed',
    );
    await new Promise((resolve) => setTimeout(resolve, 10_500));
    assert.equal(beeps(path).length, 0, 'the beep went before the greeting’s words');
    release();
    await until(() => beeps(path).length === 1, 'the beep was not reported');
    const order = path.signals.map((s) => (s.name === 'carrierCallback' ? 'beep' : s.name));
    assert.deepEqual(order, ['callerSpeech', 'beep'], 'the greeting before its beep');
  });
});

describe("the gateway's metrics of a call's audio", () => {
  test('transcriptions, syntheses, turn events and each stage’s queue waits are timed; live streams and frames behind are read when scraped', async () => {
    const counts = async () => ({
      stt: await metricCount('media_stt_seconds'),
      tts: await metricCount('media_tts_seconds'),
      turnEnds: await metricCount('media_turn_detection_seconds', { event: 'turn_ended' }),
      // Where a slow turn waits: each stage's queue (lib/serial-queue.ts).
      waits: Object.fromEntries(
        await Promise.all(
          ['caller_audio', 'user_turns', 'answers', 'agent_voice', 'workflow_outbox'].map(
            async (stage) => [stage, await metricCount('media_stage_queue_wait_seconds', { stage })] as const,
          ),
        ),
      ),
    });
    const before = await counts();
    const path = await call({ runtime: new ScriptedRuntime(() => ANSWER) });
    assert.deepEqual(await path.takeTurns(), { turns: 'taken' });
    path.says(ASK, 1200);
    path.silence(800);
    await until(() => gatewayTurns(path).length === 1, 'the line was not taken');
    await until(() => path.out.frames > 0, 'the answer was not played');
    const after = await counts();
    assert.ok(after.stt > before.stt, 'the line was transcribed');
    assert.ok(after.tts > before.tts, 'the answer was synthesized');
    assert.equal(after.turnEnds - before.turnEnds, 1, 'one end of turn');
    for (const stage of ['caller_audio', 'user_turns', 'answers', 'agent_voice', 'workflow_outbox']) {
      assert.ok(after.waits[stage]! > before.waits[stage]!, `${stage}'s queue waits are observed`);
    }

    watchGatewayCalls({ streams: () => 3, framesBehind: () => 7 });
    const text = await metricsRegistry.metrics();
    assert.match(text, /^media_streams_live 3$/m);
    assert.match(text, /^media_frames_behind 7$/m);
  });
});

/** A counter's value (summed over its labels) in this process's registry. */
async function metricValue(name: string): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric(name)?.get();
  return (metric?.values ?? []).reduce((sum, value) => sum + value.value, 0);
}

/** How many observations a histogram has (those with `labels`). */
async function metricCount(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric(name)?.get();
  return (metric?.values ?? [])
    .filter((value) => (value as { metricName?: string }).metricName === `${name}_count`)
    .filter((value) => Object.entries(labels).every(([key, wanted]) => value.labels[key] === wanted))
    .reduce((sum, value) => sum + value.value, 0);
}
