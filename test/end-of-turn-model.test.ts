import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EndOfTurnRule } from '../lib/audio/pause-verdict.js';
import { TurnDetector } from '../lib/audio/turn-detector.js';
import type { HeardWords } from '../lib/speech/speech-ports.js';
import { endOfTurnRule } from '../media/end-of-turn-rule.js';
import { HeardAhead } from '../media/heard-ahead.js';
import { levelVoiceActivity } from './support/media-path.js';
import { concat, silence } from './support/test-audio.js';

// End of turn by a model (VOICE_TURN_DETECTION=model, lib/audio/turn-detector.ts), on fakes at its
// ports: speech is a loud tone and silence is silence (the level voice activity of
// test/support/media-path.ts), and the model answers as each test says. At a pause (60 ms) the
// model is asked; from VOICE_TURN_PAUSE_MS of silence on, complete ends the turn, not complete
// waits up to VOICE_TURN_MAX_MS; a model that fails leaves the call to the silence rule
// (VOICE_ENDPOINTING_MS), told once.

const FRAME = 160; // 20 ms at 8 kHz
const speech = (ms: number) =>
  Int16Array.from({ length: (ms * 8) | 0 }, (_, i) => (i % 32 < 16 ? 8000 : -8000));

/**
 * Feeds the audio frame by frame; when each turn ended (the frame's end, ms) and where it ended
 * (its speech's end). With `heardAhead` its pauses are transcribed ahead as the gateway's user
 * turns do (begun at `speech_paused`, dropped when speech resumes); `afterFrame` runs after each frame.
 */
async function turnsOf(
  detector: TurnDetector,
  audio: Int16Array,
  options: { heardAhead?: HeardAhead; afterFrame?: (atMs: number) => void } = {},
) {
  const turns: { decidedAtMs: number; endedAtMs: number; audioMs: number }[] = [];
  for (let start = 0; start + FRAME <= audio.length; start += FRAME) {
    const atMs = (start / FRAME) * 20;
    for (const event of await detector.push(audio.subarray(start, start + FRAME), atMs)) {
      if (event.type === 'speech_paused') options.heardAhead?.begin(event).text.catch(() => {});
      if (event.type === 'speech_resumed') options.heardAhead?.drop();
      if (event.type === 'turn_ended')
        turns.push({ decidedAtMs: atMs + 20, endedAtMs: event.endedAtMs, audioMs: event.audio.length / 8 });
    }
    options.afterFrame?.(atMs);
    // The model's answer, when it has one, comes before the next frame (as the network's would, between frames).
    await new Promise((resolve) => setImmediate(resolve));
  }
  return turns;
}

function modelSaying(...answers: (boolean | 'fail' | 'never')[]) {
  const asked: number[] = [];
  const failures: unknown[] = [];
  const rule: EndOfTurnRule = {
    pauseMs: 200,
    maxMs: 2000,
    complete: (audio) => {
      asked.push(audio.length / 8);
      const answer = answers[Math.min(asked.length - 1, answers.length - 1)];
      if (answer === 'fail') return Promise.reject(new Error('the model is gone'));
      if (answer === 'never') return new Promise<boolean>(() => {});
      return Promise.resolve(answer);
    },
    failed: (error) => void failures.push(error),
  };
  return { rule, asked, failures };
}

const detectorWith = (rule: EndOfTurnRule, options: { firstTurnBySilence?: boolean } = {}) =>
  new TurnDetector({ vad: levelVoiceActivity, endpointingMs: 600, endOfTurn: rule, ...options });

test('complete: the turn ends once the model says so after a 200 ms pause, not after 600 ms of silence', async () => {
  const model = modelSaying(true);
  const turns = await turnsOf(detectorWith(model.rule), concat(silence(400), speech(1200), silence(1500)));
  assert.equal(turns.length, 1);
  const [turn] = turns;
  assert.ok(Math.abs(turn.endedAtMs - 1600) <= 40, `its speech ended at ${turn.endedAtMs} ms`);
  assert.ok(
    turn.decidedAtMs - turn.endedAtMs <= 260,
    `decided ${turn.decidedAtMs - turn.endedAtMs} ms after it`,
  );
  assert.equal(model.asked.length, 1, 'asked once');
  assert.ok(model.asked[0] >= 1200, `the model heard the turn (${model.asked[0]} ms)`);
});

test('the model is asked at the pause (60 ms of silence), and its answer is taken at VOICE_TURN_PAUSE_MS, not sooner', async () => {
  const model = modelSaying(true);
  let frameEndMs = 0;
  const askedAtMs: number[] = [];
  const rule: EndOfTurnRule = {
    ...model.rule,
    complete: (audio) => {
      askedAtMs.push(frameEndMs + 20); // during the next frame's push
      return model.rule.complete(audio);
    },
  };
  const turns = await turnsOf(detectorWith(rule), concat(silence(400), speech(1200), silence(1500)), {
    afterFrame: (atMs) => {
      frameEndMs = atMs + 20;
    },
  });
  assert.equal(turns.length, 1);
  const [{ endedAtMs, decidedAtMs }] = turns;
  const asked = askedAtMs[0] - endedAtMs;
  assert.ok(asked >= 40 && asked <= 100, `asked ${asked} ms into the pause`);
  const decided = decidedAtMs - endedAtMs;
  assert.ok(decided >= 200 && decided <= 240, `decided ${decided} ms into it`);
});

test('a call screened for an answering machine: its first turn ends by silence (a greeting heard whole), the next by the model', async () => {
  const model = modelSaying(true);
  // "Hi," 300 ms "you have reached Kari…", then the machine's silence; later a second turn.
  const turns = await turnsOf(
    detectorWith(model.rule, { firstTurnBySilence: true }),
    concat(silence(200), speech(400), silence(300), speech(1500), silence(1000), speech(800), silence(1000)),
  );
  assert.equal(turns.length, 2, 'the greeting is one turn, not cut at its comma');
  assert.ok(Math.abs(turns[0].endedAtMs - 2400) <= 40, `the greeting ended at ${turns[0].endedAtMs} ms`);
  const first = turns[0].decidedAtMs - turns[0].endedAtMs;
  assert.ok(first >= 600 && first <= 640, `the greeting ended after ${first} ms of silence`);
  const second = turns[1].decidedAtMs - turns[1].endedAtMs;
  assert.ok(second >= 200 && second <= 240, `the next turn, by the model, after ${second} ms`);
  assert.equal(model.asked.length, 1, 'the model is asked from the second turn on');
});

test('not complete: a caller reading out digits with pauses is not cut off; the pauses are asked about, the turn is whole', async () => {
  const model = modelSaying(false, false, true);
  const digits = concat(
    silence(300),
    speech(700), // "nine one two"
    silence(900),
    speech(700), // "three four"
    silence(900),
    speech(500), // "five six"
    silence(1500),
  );
  const turns = await turnsOf(detectorWith(model.rule), digits);
  assert.equal(turns.length, 1, 'one turn, not three');
  assert.equal(model.asked.length, 3, 'each pause was asked about');
  assert.ok(Math.abs(turns[0].endedAtMs - 4000) <= 40, `ended at ${turns[0].endedAtMs}`);
});

test('not complete and no more speech: the turn ends after VOICE_TURN_MAX_MS of silence; a decision that never comes, the same', async () => {
  for (const answer of [false, 'never'] as const) {
    const model = modelSaying(answer);
    const turns = await turnsOf(detectorWith(model.rule), concat(silence(200), speech(800), silence(2600)));
    assert.equal(turns.length, 1, String(answer));
    assert.ok(
      Math.abs(turns[0].decidedAtMs - turns[0].endedAtMs - 2000) <= 40,
      `${answer}: decided ${turns[0].decidedAtMs - turns[0].endedAtMs} ms after the speech`,
    );
  }
});

test('a model that fails: this call’s turns end by 600 ms of silence from then on, it is not asked again, and the failure is told once', async () => {
  const model = modelSaying('fail');
  const turns = await turnsOf(
    detectorWith(model.rule),
    concat(silence(200), speech(800), silence(1200), speech(800), silence(1200)),
  );
  assert.equal(turns.length, 2);
  for (const turn of turns) {
    const after = turn.decidedAtMs - turn.endedAtMs;
    assert.ok(after >= 600 && after <= 640, `decided ${after} ms after the speech`);
  }
  assert.equal(model.asked.length, 1, 'not asked again');
  assert.equal(model.failures.length, 1);
});

test('speech too short to be a turn is not asked about', async () => {
  const model = modelSaying(true);
  const turns = await turnsOf(detectorWith(model.rule), concat(silence(200), speech(60), silence(1000)));
  assert.deepEqual([turns.length, model.asked.length], [0, 0]);
});

// The pause's words (media/end-of-turn-rule.ts): the pause is transcribed ahead as the gateway's
// user turns do (media/heard-ahead.ts, begun at `speech_paused`, dropped when speech resumes), by a
// transcriber whose words each test gives and whose answer comes when the test says.

function wordsSaying(...texts: (string | HeardWords | 'fail')[]) {
  const answers: { resolve: (heard: HeardWords) => void; reject: (error: Error) => void }[] = [];
  const heardAhead = new HeardAhead(
    () =>
      new Promise<HeardWords>((resolve, reject) => {
        answers.push({ resolve, reject });
      }),
  );
  /** Answers the pauses asked so far (their transcriptions come in). */
  const answer = () => {
    for (const [i, pending] of answers.entries()) {
      const text = texts[Math.min(i, texts.length - 1)];
      if (text === 'fail') pending.reject(new Error('the speech server is gone'));
      else pending.resolve(typeof text === 'string' ? { text } : text);
    }
  };
  return { heardAhead, answer, asked: () => answers.length };
}

const ruleWith = (
  model: ReturnType<typeof modelSaying>,
  words: ReturnType<typeof wordsSaying>,
  agentLine?: string,
  doubtBelow?: number,
) =>
  endOfTurnRule({
    model: { complete: ({ samples }) => model.rule.complete(samples) },
    heardAhead: words.heardAhead,
    language: 'en-US',
    ...(agentLine === undefined ? {} : { agentLine: () => agentLine }),
    ...(doubtBelow === undefined ? {} : { doubtBelow }),
    pauseMs: 200,
    maxMs: 2000,
  });

test('the model says complete but the words lead on ("a table for"): the turn waits, and the rest is in it', async () => {
  const model = modelSaying(true);
  const words = wordsSaying(
    'I would like to book a table for',
    'I would like to book a table for two on Friday.',
  );
  const audio = concat(silence(300), speech(1000), silence(800), speech(700), silence(1500));
  const turns = await turnsOf(detectorWith(ruleWith(model, words)), audio, {
    heardAhead: words.heardAhead,
    afterFrame: words.answer,
  });
  assert.equal(turns.length, 1, 'one turn, not cut at the pause');
  assert.ok(Math.abs(turns[0].endedAtMs - 2800) <= 40, `ended at ${turns[0].endedAtMs}`);
  assert.ok(turns[0].decidedAtMs - turns[0].endedAtMs <= 260, 'the finished words end it at the pause');
  assert.equal(model.asked.length, 2);
});

/** Turns of two parts with a pause between, whose words are `parts` at the pause and at the end, after each agent line. */
async function turnsAfterLines(agentLines: string[], parts: [string, string], partsMs: [number, number]) {
  const audio = concat(silence(300), speech(partsMs[0]), silence(800), speech(partsMs[1]), silence(2500));
  const counts: number[] = [];
  for (const agentLine of agentLines) {
    const model = modelSaying(true);
    const words = wordsSaying(...parts);
    const turns = await turnsOf(detectorWith(ruleWith(model, words, agentLine)), audio, {
      heardAhead: words.heardAhead,
      afterFrame: words.answer,
    });
    counts.push(turns.length);
  }
  return counts;
}

test('after the agent asked for the number, a caller giving it in groups is not cut off where Whisper writes one digit ("It is five."); asked for nothing, that is a turn', async () => {
  assert.deepEqual(
    await turnsAfterLines(
      ['Sure. What is the number?', 'Sure, I can help with that.'],
      ['It is five.', 'It is five, five, nine, one.'],
      [700, 900],
    ),
    [1, 2],
    'one turn after the question; cut at the pause after the other line',
  );
});

test('after the agent asked for an email address, a caller giving it in parts is not cut off at "john dot smith."; asked for nothing, that is a turn', async () => {
  assert.deepEqual(
    await turnsAfterLines(
      ['Thanks. What is your email address?', 'Thanks, I have noted that.'],
      ['It is john dot smith.', 'It is john dot smith at gmail dot com.'],
      [1100, 1000],
    ),
    [1, 2],
    'one turn after the question; cut at the pause after the other line',
  );
});

test('asked for the last four digits, a caller who gives four is answered at the pause; asked for a number of no length, the same words wait VOICE_TURN_MAX_MS', async () => {
  const audio = concat(silence(300), speech(1200), silence(2500));
  const waited: number[] = [];
  for (const agentLine of ['What are the last four digits of your card?', 'What is your card number?']) {
    const model = modelSaying(true);
    const words = wordsSaying('It is 4 7 1 2.');
    const turns = await turnsOf(detectorWith(ruleWith(model, words, agentLine)), audio, {
      heardAhead: words.heardAhead,
      afterFrame: words.answer,
    });
    assert.equal(turns.length, 1, agentLine);
    waited.push(turns[0].decidedAtMs - turns[0].endedAtMs);
  }
  assert.ok(waited[0] <= 260, `four digits of four: ended ${waited[0]} ms after the speech`);
  assert.ok(Math.abs(waited[1] - 2000) <= 40, `four digits of a number of no length: ${waited[1]} ms`);
});

test('a phone number read out in groups is not cut off, although the model calls each pause complete', async () => {
  const model = modelSaying(true);
  const words = wordsSaying('My number is 912', 'My number is 912 34', 'My number is 912 34 56.');
  const audio = concat(
    silence(300),
    speech(900),
    silence(800),
    speech(500),
    silence(800),
    speech(600),
    silence(2500),
  );
  const turns = await turnsOf(detectorWith(ruleWith(model, words)), audio, {
    heardAhead: words.heardAhead,
    afterFrame: words.answer,
  });
  assert.equal(turns.length, 1, 'one turn');
  // 7 digits are no whole number (a US one has 10): after the last group the turn waits VOICE_TURN_MAX_MS for more.
  assert.ok(Math.abs(turns[0].endedAtMs - 3900) <= 40, `ended at ${turns[0].endedAtMs}`);
  assert.ok(Math.abs(turns[0].decidedAtMs - turns[0].endedAtMs - 2000) <= 40);
});

test('the turn waits for the words, and ends in the frame they come; none, or a failed transcription, leave it to the model', async () => {
  const model = modelSaying(true);
  const words = wordsSaying('Please cancel my appointment.');
  const audio = concat(silence(300), speech(1000), silence(1500));
  // The transcription comes 300 ms after the pause (at 1300 + 200 + 300 ms).
  const turns = await turnsOf(detectorWith(ruleWith(model, words)), audio, {
    heardAhead: words.heardAhead,
    afterFrame: (atMs) => {
      if (atMs >= 1800) words.answer();
    },
  });
  assert.equal(turns.length, 1);
  assert.ok(
    turns[0].decidedAtMs >= 1800 && turns[0].decidedAtMs <= 1860,
    `decided at ${turns[0].decidedAtMs}`,
  );

  for (const transcription of ['none', 'fail'] as const) {
    const failing = wordsSaying('fail');
    const turnsAlone = await turnsOf(detectorWith(ruleWith(modelSaying(true), failing)), audio, {
      // 'none': the pause the rule reads is never transcribed (a short sound over the agent, a call ending).
      heardAhead: transcription === 'none' ? new HeardAhead(() => new Promise(() => {})) : failing.heardAhead,
      afterFrame: failing.answer,
    });
    assert.equal(turnsAlone.length, 1, transcription);
    assert.ok(turnsAlone[0].decidedAtMs - turnsAlone[0].endedAtMs <= 280, transcription);
  }
});

test('the model doubts words that sound finished: the turn ends halfway to VOICE_TURN_MAX_MS, and a pause shorter than that keeps it whole', async () => {
  const doubted = async (audio: Int16Array, ...texts: string[]) => {
    const words = wordsSaying(...texts);
    return turnsOf(detectorWith(ruleWith(modelSaying(false), words)), audio, {
      heardAhead: words.heardAhead,
      afterFrame: words.answer,
    });
  };
  const [alone] = await doubted(
    concat(silence(300), speech(1000), silence(2500)),
    'My order has not arrived yet.',
  );
  assert.ok(
    Math.abs(alone.decidedAtMs - alone.endedAtMs - 1100) <= 40,
    `decided ${alone.decidedAtMs - alone.endedAtMs} ms after the speech`,
  );
  const goesOn = await doubted(
    concat(silence(300), speech(1000), silence(900), speech(700), silence(2500)),
    'I need a taxi.',
    'I need a taxi to the airport.',
  );
  assert.equal(goesOn.length, 1, 'the 900 ms pause did not end it');
  assert.ok(Math.abs(goesOn[0].endedAtMs - 2900) <= 40, `ended at ${goesOn[0].endedAtMs}`);
});

test('words Whisper was unsure of ("The code did not." at −0.31): the turn ends halfway to VOICE_TURN_MAX_MS, and a 900 ms pause keeps it whole; sure words, or no threshold, at the pause', async () => {
  const lone = concat(silence(300), speech(1000), silence(2500));
  const waitedAfter = async (heard: HeardWords, options: { doubtBelow?: number; model?: boolean } = {}) => {
    const words = wordsSaying(heard);
    const rule = ruleWith(modelSaying(options.model ?? true), words, undefined, options.doubtBelow);
    const [turn] = await turnsOf(detectorWith(rule), lone, {
      heardAhead: words.heardAhead,
      afterFrame: words.answer,
    });
    return Math.round((turn.decidedAtMs - turn.endedAtMs) / 100) * 100;
  };
  const cutOff = { text: 'The code did not.', avgLogprob: -0.31 };
  assert.equal(await waitedAfter(cutOff, { doubtBelow: -0.26 }), 1100, 'unsure: halfway');
  assert.equal(
    await waitedAfter({ text: 'The code did not.', avgLogprob: -0.12 }, { doubtBelow: -0.26 }),
    200,
    'sure',
  );
  assert.equal(
    await waitedAfter(cutOff),
    200,
    'no threshold (hosted speech, another language): the score is not read',
  );
  assert.equal(
    await waitedAfter({ text: 'The code did not.' }, { doubtBelow: -0.26 }),
    200,
    'no score given',
  );
  assert.equal(
    await waitedAfter({ text: '', avgLogprob: -0.9 }, { doubtBelow: -0.26 }),
    200,
    'no words: the model alone',
  );
  assert.equal(await waitedAfter(cutOff, { doubtBelow: -0.26, model: false }), 2000, 'the model doubts too');

  const words = wordsSaying(cutOff, { text: 'The code did not arrive in my email.', avgLogprob: -0.1 });
  const goesOn = await turnsOf(
    detectorWith(ruleWith(modelSaying(true), words, undefined, -0.26)),
    concat(silence(300), speech(1000), silence(900), speech(700), silence(2500)),
    { heardAhead: words.heardAhead, afterFrame: words.answer },
  );
  assert.equal(goesOn.length, 1, 'the 900 ms pause did not end it');
  assert.ok(Math.abs(goesOn[0].endedAtMs - 2900) <= 40, `ended at ${goesOn[0].endedAtMs}`);
  assert.ok(goesOn[0].decidedAtMs - goesOn[0].endedAtMs <= 260, 'the sure rest ended at its pause');
});

test('a caller whose own finished turns Whisper is unsure of (eSpeak’s English, a bad line): after three such turns the score is no longer read; a caller heard well is still doubted', async () => {
  const fourTurns = concat(silence(300), ...[1, 2, 3, 4].flatMap(() => [speech(1000), silence(2500)]));
  const waits = async (...scores: number[]) => {
    const words = wordsSaying(
      ...scores.map((avgLogprob) => ({ text: 'I lost my card yesterday.', avgLogprob })),
    );
    const turns = await turnsOf(
      detectorWith(ruleWith(modelSaying(true), words, undefined, -0.26)),
      fourTurns,
      {
        heardAhead: words.heardAhead,
        afterFrame: words.answer,
      },
    );
    return turns.map((turn) => Math.round((turn.decidedAtMs - turn.endedAtMs) / 100) * 100);
  };
  assert.deepEqual(await waits(-0.5, -0.45, -0.6, -0.5), [1100, 1100, 1100, 200], 'heard poorly');
  assert.deepEqual(await waits(-0.1, -0.05, -0.2, -0.31), [200, 200, 200, 1100], 'heard well');
});
