import { setTimeout as sleep } from 'node:timers/promises';
import { MediaStreamsClient } from '../lib/media/media-streams-client.js';
import { benchServer } from './bench-cluster.js';
import { oneCount } from './bench-counts.js';
import { BACKCHANNELS, INTERRUPTIONS, percentile, rate } from './over-the-agent.js';
import { GIVES_NUMBER, labelledUtterances, NUMBER_QUESTION, type Utterance } from './turn-utterances.js';
import { type LogLine, startVoiceStack, waitFor } from './voice-stack.js';

// The turn-taking bench through a media gateway process (bench/turn-taking.ts drives the gateway's
// stages in this process; here they run where they do in production): the stack of the voice bench
// (bench/voice-stack.ts: media/main.ts and workers/main.ts as processes, the local speech server,
// Temporal, PostgreSQL, a language-model stand-in), and BENCH_TURN_CALLS (3) callers on Media
// Streams, each saying its share of the labelled utterances (bench/turn-utterances.ts) and 25
// lines over the talking agent (bench/over-the-agent.ts), one after the other, in real time:
//   - an utterance is said, its parts with their pauses; then the agent's answer is waited for
//     and heard out. Its caller turns are the gateway's `caller turn` lines logged meanwhile: a
//     complete one's end of turn is its first turn's end (`turnEndedAt`) after the end of the
//     caller's audio; a cut or digit one was cut when a turn ended before its last part began
//     (an afterthought's turn ending there is counted apart). Before a digit one the caller says
//     "I have a number for you." and the agent asks "Sure. What is the number?" (not measured): a
//     number is read out when it is asked for;
//   - over the agent: the caller asks something ("Tell me more, please."), and 800 ms into the
//     answer says a backchannel or an interruption; the agent was stopped when the gateway sent
//     `clear` within 2.5 s of the speech's start.
// The turn rule is the gateway's (VOICE_TURN_DETECTION, model unless told). BENCH_TURN_LIMIT=N
// runs about N of the lines, evenly spread over the kinds (a quick look); BENCH_TURN_LLM_MS the
// language-model stand-in's time to its answer (300 unless told; a hosted model's is 500–1000 ms,
// which an afterthought's answer is still waiting for when the caller goes on).
//
//   npm run bench -- turn-taking-gateway    targets as bench/turn-taking.ts: end of turn p50 ≤ 300 ms,
//                                           false cuts ≤ 5 %, false interruptions ≤ 10 %

if (benchServer() !== 'dev') throw new Error('the turn-taking gateway bench runs on BENCH_SERVER=dev only');

const CALLS = oneCount('BENCH_TURN_CALLS', '3');
const LIMIT = process.env.BENCH_TURN_LIMIT ? oneCount('BENCH_TURN_LIMIT', '1') : Number.POSITIVE_INFINITY;
const TURN_DETECTION = process.env.VOICE_TURN_DETECTION || 'model';
const LLM_MS = oneCount('BENCH_TURN_LLM_MS', '300');
const TOKEN = 'bench-turn-taking-token';
const GREETING = 'Hello, Acme bookings.';
/** The agent's every answer: long enough (about 4 s) to be talked over. */
const ANSWER = 'Certainly, I can help you with that. Let me look at it for a moment, please.';
const ASK = 'Tell me more, please.';
/** Agent audio silent this long has finished its answer (a gap between sentences is shorter). */
const ANSWER_OVER_QUIET_MS = 1500;
/** Over the agent: how far into its answer the caller speaks, and how long a stop is waited for. */
const INTO_ANSWER_MS = 800;
const STOP_WAIT_MS = 2500;

const epoch = (performanceMs: number) => performance.timeOrigin + performanceMs;

type Line =
  | { kind: 'utterance'; utterance: Utterance }
  | { kind: 'over'; text: string; backchannel: boolean; samples: Int16Array };

interface Heard {
  line: Line;
  /** A complete utterance: its end of speech → its turn's end, ms. */
  endOfTurnMs?: number;
  /** A cut or digit utterance (or an afterthought, counted apart): a turn ended before its last part. */
  cut?: boolean;
  /** A cut: the caller's audio up to the pause it ended at (for the words heard there, cut_at). */
  cutAudio?: Int16Array;
  /** An afterthought: ms of the agent's voice heard while the caller said its last part. */
  talkedOverMs?: number;
  /** Over the agent: the speech's start → `clear`, ms, or null. */
  stoppedAfterMs?: number | null;
}

const stack = await startVoiceStack({
  name: 'turn_taking',
  greeting: GREETING,
  // Asked for a number (the caller's GIVES_NUMBER line), the agent asks what it is: the digit lines answer that.
  answer: (callerSaid) => (/\bnumber for you\b/i.test(callerSaid) ? NUMBER_QUESTION : ANSWER),
  llmDelayMs: LLM_MS,
  endpointingMs: 600,
  turnDetection: TURN_DETECTION,
  numbers: CALLS,
  token: TOKEN,
});
try {
  const { speech, streamsUrl, gatewayLog, agent } = stack;
  console.log('making the caller lines (not measured)');
  const { utterances, spoken, unconfirmedCuts } = await labelledUtterances(speech.tts, speech.stt);
  const ask = (await spoken(ASK)).samples;
  const givesNumber = (await spoken(GIVES_NUMBER)).samples;
  const over = [
    ...BACKCHANNELS.map((text) => ({ text, backchannel: true })),
    ...INTERRUPTIONS.map((text) => ({ text, backchannel: false })),
  ];
  const lines: Line[] = [
    ...utterances.map((utterance): Line => ({ kind: 'utterance', utterance })),
    ...(await Promise.all(
      over.map(
        async (one): Promise<Line> => ({ kind: 'over', ...one, samples: (await spoken(one.text)).samples }),
      ),
    )),
  ].filter((_, k, all) => k % Math.max(1, Math.floor(all.length / LIMIT)) === 0);

  // Warm up: the workflow bundle, the connections, the models; not measured.
  console.log('warm-up call (not measured)');
  await placeCall(agent.numbers[0], []);

  // Dealt out in turn, so each caller has lines of every kind.
  const shares = Array.from({ length: CALLS }, (_, i) => lines.filter((_, k) => k % CALLS === i));
  const heard = (await Promise.all(shares.map((share, i) => placeCall(agent.numbers[i], share)))).flat();

  const complete = heard.filter((one) => one.endOfTurnMs !== undefined).map((one) => one.endOfTurnMs!);
  const kindOf = (one: Heard) => (one.line.kind === 'utterance' ? one.line.utterance.kind : 'over');
  const continued = heard.filter((one) => one.cut !== undefined && kindOf(one) !== 'afterthought');
  const cuts = continued.filter((one) => one.cut);
  const afterthoughts = heard.filter((one) => kindOf(one) === 'afterthought');
  const overs = heard.filter((one) => one.stoppedAfterMs !== undefined);
  const backchannels = overs.filter((one) => one.line.kind === 'over' && one.line.backchannel);
  const interruptions = overs.filter((one) => one.line.kind === 'over' && !one.line.backchannel);
  const stops = interruptions.flatMap((one) => (one.stoppedAfterMs == null ? [] : [one.stoppedAfterMs]));
  const stoppedBy = backchannels.filter((one) => one.stoppedAfterMs !== null);
  const cutAt: string[] = [];
  for (const one of cuts) {
    const samples = one.cutAudio;
    cutAt.push(
      samples ? await speech.stt.transcribe({ sampleRate: 8000, samples }, { language: 'en-US' }) : '',
    );
  }
  const said = (one: Heard) => (one.line.kind === 'utterance' ? one.line.utterance.said : one.line.text);
  console.log(
    JSON.stringify({
      bench: 'turn-taking',
      through: 'gateway process',
      turn_detection: TURN_DETECTION,
      calls: CALLS,
      llm_ms: LLM_MS,
      utterances: heard.length,
      end_of_turn_p50_ms: percentile(complete, 50),
      end_of_turn_p95_ms: percentile(complete, 95),
      false_cut_rate: rate(cuts.length, continued.length),
      cut: cuts.map(said),
      // What the local Whisper hears in each cut's audio up to its pause (after the run, not measured):
      // the words the gateway most likely heard there.
      cut_at: cutAt,
      // No target: a whole sentence, then a pause, may end the turn (bench/turn-utterances.ts).
      afterthoughts_ended_at_pause_rate: rate(
        afterthoughts.filter((one) => one.cut).length,
        afterthoughts.length,
      ),
      // The agent's voice over the caller going on (ms of it heard during the last part): an answer
      // held while they speak is none; one already playing is stopped by their speech (a barge-in).
      afterthoughts_talked_over_ms: afterthoughts.map((one) => one.talkedOverMs ?? null),
      unconfirmed_cuts: unconfirmedCuts,
      backchannels: backchannels.length,
      false_interruption_rate: rate(stoppedBy.length, backchannels.length),
      stopped_by: stoppedBy.map(said),
      interruptions: interruptions.length,
      interruptions_missed: interruptions.length - stops.length,
      interruption_stop_p50_ms: percentile(stops, 50),
      interruption_stop_max_ms: stops.length ? Math.round(Math.max(...stops)) : null,
      // Lines whose turns the gateway never logged (a failed transcription): left out above.
      unheard: lines.length - heard.length,
    }),
  );

  /** One caller: the greeting, then each of `share` in turn, each answered; the hang-up. */
  async function placeCall(number: string, share: Line[]): Promise<Heard[]> {
    const client = await MediaStreamsClient.connect(streamsUrl);
    const answeredAt = performance.now();
    client.start({ to: number, from: '+4790000000', token: TOKEN });
    const results: Heard[] = [];
    try {
      await client.agentStarts(answeredAt, 60_000);
      await client.agentFinished({ quietMs: ANSWER_OVER_QUIET_MS, limitMs: 60_000 });
      const started = await waitFor(() =>
        gatewayLog.find((line) => line.msg === 'media stream started' && line.streamSid === client.streamSid),
      );
      const turnsSoFar = () =>
        gatewayLog.filter((line) => line.msg === 'caller turn' && line.callId === started.callId);
      for (const line of share) {
        // A number is read out when the agent asks for it: that exchange first, not measured.
        if (line.kind === 'utterance' && line.utterance.kind === 'digits') {
          await hearOut(client, await client.agentStarts(await client.say(givesNumber), 30_000));
        }
        const before = turnsSoFar().length;
        const result =
          line.kind === 'utterance'
            ? await sayUtterance(client, line.utterance, () => turnsSoFar().slice(before))
            : await sayOverTheAgent(client, ask, line.samples);
        if (result) results.push({ line, ...result });
      }
    } catch (error) {
      console.error(`a caller gave up: ${error}`);
    }
    client.stop();
    client.close();
    await client.closed;
    return results;
  }
} finally {
  await stack.stop();
}

/** Says `utterance` and hears the answer out; when its turns ended. Null: no turn was logged. */
async function sayUtterance(
  client: MediaStreamsClient,
  utterance: Utterance,
  turnsOfIt: () => LogLine[],
): Promise<Pick<Heard, 'endOfTurnMs' | 'cut' | 'cutAudio' | 'talkedOverMs'> | null> {
  const first = utterance.parts[0];
  const last = utterance.parts.at(-1)!;
  const saidEndAt = await client.say(
    utterance.audio.subarray(Math.round(first.startMs * 8), Math.round(last.endMs * 8)),
  );
  const lastStartedAt = epoch(saidEndAt - (last.endMs - last.startMs));
  await hearOut(client, await client.agentStarts(saidEndAt, 30_000));
  const turns = await waitFor(() => (turnsOfIt().length > 0 ? turnsOfIt() : undefined), 5_000).catch(
    () => [],
  );
  if (turns.length === 0) return null;
  if (utterance.kind !== 'complete') {
    const cutAt = turns.find((turn) => turn.turnEndedAt < lastStartedAt)?.turnEndedAt;
    const cut = cutAt !== undefined;
    if (utterance.kind !== 'afterthought') {
      if (!cut) return { cut };
      // The part before the pause it ended at (its time in the utterance: the said audio began at first.startMs).
      const atMs = cutAt - epoch(saidEndAt - (last.endMs - first.startMs)) + first.startMs;
      const before = utterance.parts.findLast((part) => part.endMs <= atMs) ?? first;
      return {
        cut,
        cutAudio: utterance.audio.subarray(Math.round(first.startMs * 8), Math.round(before.endMs * 8)),
      };
    }
    const over = client.agentAudio(saidEndAt - (last.endMs - last.startMs), saidEndAt);
    let loudFrames = 0;
    for (let at = 0; at < over.length; at += 160) {
      if (over.subarray(at, at + 160).some((sample) => Math.abs(sample) > 300)) loudFrames++;
    }
    return { cut, talkedOverMs: loudFrames * 20 };
  }
  return { endOfTurnMs: turns[0].turnEndedAt - epoch(saidEndAt) };
}

/** Says `ask`, then `samples` INTO_ANSWER_MS into the answer; when the agent was stopped (null: not). */
async function sayOverTheAgent(
  client: MediaStreamsClient,
  ask: Int16Array,
  samples: Int16Array,
): Promise<Pick<Heard, 'stoppedAfterMs'>> {
  const askedAt = await client.say(ask);
  const answerAt = await client.agentStarts(askedAt, 30_000);
  await sleep(Math.max(0, answerAt + INTO_ANSWER_MS - performance.now()));
  const clearsBefore = client.clears.length;
  // say() begins with the next frame: the speech starts within 20 ms of this.
  const speechAt = performance.now();
  const saidEndAt = await client.say(samples);
  await sleep(Math.max(0, speechAt + STOP_WAIT_MS - performance.now()));
  const clearAt = client.clears.slice(clearsBefore).find((at) => at >= speechAt);
  // A stopped agent answers what stopped it: that answer is heard out too.
  await hearOut(client, clearAt === undefined ? speechAt : await client.agentStarts(saidEndAt, 30_000));
  return { stoppedAfterMs: clearAt === undefined ? null : Math.round(clearAt - speechAt) };
}

/** Until the agent's answer (its audio from `after` on) is over and no more comes within a second. */
async function hearOut(client: MediaStreamsClient, after: number): Promise<void> {
  await client.agentFinished({ after, quietMs: ANSWER_OVER_QUIET_MS, limitMs: 60_000 });
  while (await client.agentSpokeSince(performance.now(), 1_000)) {
    await client.agentFinished({ quietMs: ANSWER_OVER_QUIET_MS, limitMs: 60_000 });
  }
}
