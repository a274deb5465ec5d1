import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { MediaStreamsClient } from '../lib/media/media-streams-client.js';
import { loadSettings } from '../lib/settings.js';
import { type AgentTurnLatency, callProgressQuery } from '../lib/temporal/call-messages.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { endOfSpeech } from '../test/support/test-audio.js';
import { benchServer } from './bench-cluster.js';
import { countsFrom } from './bench-counts.js';
import { type LogLine, startVoiceStack, waitFor } from './voice-stack.js';

// Spoken calls end to end: for each N in BENCH_VOICE_CONCURRENCY (1,5,10), N concurrent audio
// calls through the stack of bench/voice-stack.ts: the media gateway (media/main.ts, a process of its own), the workers
// (workers/main.ts, one process), the real local speech server (VOICE_SPEECH=local: Whisper tiny
// and Piper, provisioned and cached as the tests do), a Temporal dev server and a throw-away
// PostgreSQL of the bench's own, and a language-model stand-in (OpenAI-compatible chat completions,
// streamed) that starts its two-sentence answer after BENCH_VOICE_LLM_DELAY_MS (300).
// Each call: a Media Streams client (lib/media/media-streams-client.ts) hears the greeting,
// then says a Piper-made line in real time (made before any run, and trimmed to its last sound so
// that the end of the audio is the end of speech), waits until the agent's answer has played,
// BENCH_VOICE_TURNS (5) times, and hangs up. Each caller says the lines in a rendering of their own
// (Piper's voice varies from one synthesis to the next, as two people's would, and so does whether
// the end-of-turn model doubts a line); BENCH_VOICE_LINES=shared gives every call the same
// rendering (the runs before 2026-12-01: a line doubted is doubted in every call, so a run's p50
// depends on how few renderings were made). The N calls start together, so their turns
// come at the same moments (the worst case: every pause of every call at once);
// BENCH_VOICE_SPREAD_MS spreads their starts evenly over that many ms instead (callers who call
// independently: a turn's cycle here, line, answer and its quiet end, is about 10 s).
//
// Per turn: voice-to-voice (end of the caller's audio → the first agent audio the client gets) and
// its parts on the turn's path: the turn's end (with VOICE_TURN_DETECTION=model as the gateway
// detected it, VAD end of speech → turn ended; with silence VOICE_ENDPOINTING_MS, 600), STT after the turn ended
// (the gateway's `caller turn` sttAfterTurnMs: the transcription begins at the caller's pause,
// during the endpointing wait), the language model until its first sentence after the turn asked
// (callProgress agentTurns firstSentenceMs: with VOICE_PREEMPTIVE_GENERATION the model was asked
// during the pause too), the first sentence's TTS (the gateway's `agent sentence` ttsMs).
// service-added = voice-to-voice − all four: what the service itself adds (the gateway's turn, or
// the Temporal hops and the control API where the workflow takes the turns; queueing in the
// gateway). The transcription's own time (sttMs) and how many turns were heard and answered ahead
// are reported beside them.
// Targets for the development machine (2 shared cores): service-added ≤ 150 ms p95 at 10
// concurrent calls; voice-to-voice p50 ≤ 800 ms with one call and ≤ 1.1 s with up to five (issue
// "turn-taking and languages"), ≤ 1.2 s with more. The bench process's event-loop lag is reported
// to show that the caller side is not the bottleneck.
//
//   npm run bench -- voice    BENCH_VOICE_CONCURRENCY=1,5,10 BENCH_VOICE_TURNS=5 BENCH_VOICE_SPREAD_MS=0
//                             BENCH_VOICE_LINES=per-call (or shared)
//                             BENCH_VOICE_LLM_DELAY_MS=300 VOICE_ENDPOINTING_MS=600
//                             VOICE_TURN_DETECTION=model (or silence)
// Only BENCH_SERVER=dev: the cluster harness does not start a media gateway.

const CONCURRENCY = countsFrom('BENCH_VOICE_CONCURRENCY', '1,5,10');
const TURNS = Number(process.env.BENCH_VOICE_TURNS || 5);
/** The calls' starts spread evenly over this many ms (0: all at once). */
const SPREAD_MS = Number(process.env.BENCH_VOICE_SPREAD_MS || 0);
if (!Number.isFinite(SPREAD_MS) || SPREAD_MS < 0)
  throw new Error('BENCH_VOICE_SPREAD_MS is a number of ms, 0 or more');
/** Whose rendering of the caller lines a call says: its own (per-call) or one for all (shared). */
const LINES = process.env.BENCH_VOICE_LINES || 'per-call';
if (LINES !== 'per-call' && LINES !== 'shared') throw new Error('BENCH_VOICE_LINES is per-call or shared');
const LLM_DELAY_MS = Number(process.env.BENCH_VOICE_LLM_DELAY_MS || 300);
const ENDPOINTING_MS = Number(process.env.VOICE_ENDPOINTING_MS || 600);
/** How turns end: the model (the default with VOICE_SPEECH=local, which this bench stands for) or silence. */
const TURN_DETECTION = process.env.VOICE_TURN_DETECTION || 'model';
const PREEMPTIVE_GENERATION = loadSettings(process.env).media.preemptiveGeneration;
const SERVICE_ADDED_P95_TARGET_MS = 150;
/** Voice-to-voice p50 with this many calls at once: 800 ms with one, 1.1 s with up to five, 1.2 s beyond. */
const voiceToVoiceTargetMs = (concurrent: number) => (concurrent <= 1 ? 800 : concurrent <= 5 ? 1100 : 1200);
/** The opening line: its first audio within this of the answer (issue "turn-taking and languages"). */
const OPENING_TARGET_MS = 300;
const TOKEN = 'bench-voice-token';
const GREETING = 'Hello, Acme bookings.';
const ANSWER =
  'Certainly, I can help you with that booking. Which day and time would suit you best, and for how many people?';
const CALLER_LINES = [
  'I would like to book a table for two on Friday.',
  'Could we make it at seven in the evening?',
  'It is for my sister and me.',
  'Do you have a table by the window?',
  'Thank you, that sounds perfect.',
];
/** A line's audio ends this close to the speech end of the gateway's turn for it (VAD's lag, the socket: tens of ms). */
const MATCH_MS = 1000;
/** Agent audio silent this long has finished its answer (a gap between sentences is shorter). */
const ANSWER_OVER_QUIET_MS = 1500;

if (benchServer() !== 'dev') throw new Error('the voice bench runs on BENCH_SERVER=dev only');

/** One turn as the caller timed it, epoch ms. */
interface HeardTurn {
  saidEndAt: number;
  firstAudioAt: number;
}

/** One turn with all its parts, ms. */
interface TurnFigures {
  voiceToVoice: number;
  endpointed: number;
  /** The part of the transcription after the turn ended (it begins at the caller's pause). */
  stt: number;
  /** The transcription itself, queueing at the speech server included. */
  sttOwn: number;
  /** 1 when the turn's transcription began at the caller's pause, else 0. */
  heardAhead: number;
  llmFirstSentence: number;
  ttsFirstSentence: number;
  serviceAdded: number;
  /** The workflow's fromSpeechEnd.firstAudioMs: VAD's end of speech → first agent audio sent. */
  workflowFirstAudio: number;
  // service-added, part by part (they add up to it):
  /** Detected endpointing beyond VOICE_ENDPOINTING_MS (VAD windows, frames; may be negative). */
  detectionExtra: number;
  /** In the gateway between the end of the turn and the transcript, beyond the STT request. */
  gatewayIn: number;
  /**
   * The transcript to the model asked: the gateway's own turn when it takes the turns (the design
   * since issue 21), the Temporal hops (signal, workflow task, agent step) when the workflow does.
   */
  temporalHops: number;
  /** The first sentence to the gateway (control API) and its synthesised audio out, beyond TTS. */
  gatewayOut: number;
  /** End of the caller's audio ↔ VAD's end of speech, and the socket both ways. */
  edges: number;
}

const epoch = (performanceMs: number) => performance.timeOrigin + performanceMs;

const stack = await startVoiceStack({
  name: 'voice',
  greeting: GREETING,
  answer: ANSWER,
  llmDelayMs: LLM_DELAY_MS,
  endpointingMs: ENDPOINTING_MS,
  turnDetection: TURN_DETECTION,
  numbers: Math.max(...CONCURRENCY),
  token: TOKEN,
});
try {
  const { speech, streamsUrl, gatewayLog, temporalClient, agent } = stack;
  const callers = LINES === 'shared' ? 1 : Math.max(...CONCURRENCY);
  console.log(`making the caller lines, ${callers} rendering(s) (not measured)`);
  /** Caller i's lines: renderings[i % renderings.length], made one caller at a time. */
  const renderings: Int16Array[][] = [];
  for (let i = 0; i < callers; i++) {
    renderings.push(
      await Promise.all(CALLER_LINES.map(async (line) => endOfSpeech(await speech.callerSays(line)))),
    );
  }

  // Warm up: the workflow bundle, the connections, both models; not measured.
  console.log('warm-up call (not measured)');
  await placeCall(agent.numbers[0], 1, renderings[0]);

  const lag = monitorEventLoopDelay({ resolution: 10 });
  for (const concurrent of CONCURRENCY) {
    lag.reset();
    lag.enable();
    const calls = await Promise.all(
      Array.from({ length: concurrent }, async (_, i) => {
        await sleep((i * SPREAD_MS) / concurrent);
        return placeCall(agent.numbers[i], TURNS, renderings[i % renderings.length]);
      }),
    );
    lag.disable();
    const turns: TurnFigures[] = [];
    const answersAhead = { taken: 0, dropped: 0 };
    let unmatched = 0;
    const failed = calls.filter((call) => call.failure);
    for (const call of failed) console.log(`a call failed: ${call.failure}`);
    for (const call of calls) {
      const { figures, ahead } = await turnFigures(call);
      turns.push(...figures);
      answersAhead.taken += ahead.taken;
      answersAhead.dropped += ahead.dropped;
      unmatched += call.heard.length - figures.length;
    }
    report(
      concurrent,
      turns,
      {
        unmatched,
        failedCalls: failed.length,
        answersAhead,
        openings: calls.flatMap((call) => (call.openingMs === null ? [] : [call.openingMs])),
      },
      {
        p99: lag.percentile(99) / 1e6,
        max: lag.max / 1e6,
      },
    );
  }

  /** One call: the greeting, `turns` lines each answered, the hang-up. */
  async function placeCall(number: string, turns: number, lines: Int16Array[]) {
    const client = await MediaStreamsClient.connect(streamsUrl);
    // The stream's start is the call's answer: its opening line's first audio is timed from here.
    const answeredAt = performance.now();
    client.start({ to: number, from: '+4790000000', token: TOKEN });
    let openingMs: number | null = null;
    const heard: HeardTurn[] = [];
    let failure: string | null = null;
    // The gateway closing the stream before the last turn: the call ended (the agent's apology).
    let ended = false;
    void client.closed.then(() => {
      ended = true;
    });
    try {
      openingMs = (await client.agentStarts(answeredAt, 60_000)) - answeredAt;
      await client.agentFinished({ quietMs: ANSWER_OVER_QUIET_MS, limitMs: 60_000 });
      for (let turn = 0; turn < turns; turn++) {
        const saidEndAt = await client.say(lines[turn % lines.length]);
        if (ended) throw new Error('the call ended before the caller finished');
        const firstAudioAt = await client.agentStarts(saidEndAt, 60_000);
        heard.push({ saidEndAt: epoch(saidEndAt), firstAudioAt: epoch(firstAudioAt) });
        await client.agentFinished({ after: firstAudioAt, quietMs: ANSWER_OVER_QUIET_MS, limitMs: 60_000 });
        if (ended && turn < turns - 1) throw new Error(`the call ended after turn ${turn + 1}`);
      }
    } catch (error) {
      // A call the overloaded speech server fails (the agent apologises and hangs up) is counted,
      // and its turns so far still measured; the other calls go on.
      failure = `${error}`;
    }
    client.stop();
    client.close();
    await client.closed;
    return { streamSid: client.streamSid, heard, failure, openingMs };
  }

  /** The call's turns put together from the client's times, the gateway's log and callProgress. */
  async function turnFigures(call: {
    streamSid: string;
    heard: HeardTurn[];
  }): Promise<{ figures: TurnFigures[]; ahead: { taken: number; dropped: number } }> {
    const started = await waitFor(() =>
      gatewayLog.find((line) => line.msg === 'media stream started' && line.streamSid === call.streamSid),
    );
    const callId: string = started.callId;
    const callerTurnsOf = () =>
      gatewayLog.filter((line) => line.msg === 'caller turn' && line.callId === callId);
    // A turn whose transcription failed has no line: after a while, what there is.
    const callerTurns = await waitFor(
      () => (callerTurnsOf().length >= call.heard.length ? callerTurnsOf() : undefined),
      5_000,
    ).catch(callerTurnsOf);
    callerTurns.sort((a, b) => a.utterance - b.utterance);
    const progress = await temporalClient.workflow.getHandle(callWorkflowId(callId)).query(callProgressQuery);
    const agentTurns = progress.agentTurns.filter(
      (turn): turn is AgentTurnLatency & Required<Pick<AgentTurnLatency, 'fromSpeechEnd'>> =>
        turn.fromSpeechEnd !== undefined,
    );
    // A line can be two turns (its comma heard as the end, the answer to the first part dropped when
    // the caller went on): a turn the caller timed is the gateway's turn whose speech ended nearest
    // to the end of the line's audio, and the agent's turn in the same place answered it (in the
    // caller's order when the two lists differ: a turn without words has no agent turn).
    // None within MATCH_MS (its transcription failed, so it has no line): the turn is not measured.
    const offBy = (turn: LogLine, heard: HeardTurn) =>
      Math.abs(turn.turnEndedAt - turn.endpointedMs - heard.saidEndAt);
    const paired = callerTurns.length === agentTurns.length;
    const figures: TurnFigures[] = [];
    for (const [k, heard] of call.heard.entries()) {
      const nearest = callerTurns.reduce(
        (best, turn, c) => (offBy(turn, heard) < offBy(callerTurns[best], heard) ? c : best),
        0,
      );
      const match = callerTurns[nearest];
      const callerTurn = match && offBy(match, heard) <= MATCH_MS ? match : undefined;
      const agentTurn = agentTurns[paired ? nearest : k];
      const firstSentence = gatewayLog.find(
        (line) =>
          line.msg === 'agent sentence' &&
          line.callId === callId &&
          line.index === agentTurn?.index &&
          line.seq === 0,
      );
      // 0 is a time: an answer asked ahead may have had its first sentence before the turn asked.
      if (
        !callerTurn ||
        agentTurn?.firstSentenceMs == null ||
        agentTurn.firstTokenMs == null ||
        !firstSentence
      )
        continue;
      const voiceToVoice = heard.firstAudioAt - heard.saidEndAt;
      const { transcriptMs, firstTokenMs, firstAudioMs } = agentTurn.fromSpeechEnd;
      /** From VAD's end of speech until the model was asked. */
      const asked = firstTokenMs - agentTurn.firstTokenMs;
      const workflowFirstAudio = firstAudioMs ?? Number.NaN;
      // The turn's end: VOICE_ENDPOINTING_MS by the silence rule; as measured when the model decides.
      const endpointing = TURN_DETECTION === 'model' ? callerTurn.endpointedMs : ENDPOINTING_MS;
      const parts = endpointing + callerTurn.sttAfterTurnMs + agentTurn.firstSentenceMs + firstSentence.ttsMs;
      figures.push({
        voiceToVoice,
        endpointed: callerTurn.endpointedMs,
        stt: callerTurn.sttAfterTurnMs,
        sttOwn: callerTurn.sttMs,
        heardAhead: callerTurn.heardAhead ? 1 : 0,
        llmFirstSentence: agentTurn.firstSentenceMs,
        ttsFirstSentence: firstSentence.ttsMs,
        serviceAdded: voiceToVoice - parts,
        workflowFirstAudio,
        detectionExtra: callerTurn.endpointedMs - ENDPOINTING_MS,
        gatewayIn: transcriptMs - callerTurn.endpointedMs - callerTurn.sttAfterTurnMs,
        temporalHops: asked - transcriptMs,
        gatewayOut: workflowFirstAudio - asked - agentTurn.firstSentenceMs - firstSentence.ttsMs,
        edges: voiceToVoice - workflowFirstAudio,
      });
    }
    // The answers asked for during the caller's pauses, counted when the call's audio was over.
    const over = await waitFor(
      () => gatewayLog.find((line) => line.msg === 'call audio over' && line.callId === callId),
      5_000,
    ).catch(() => null);
    const ahead = over?.answersAhead ?? { taken: 0, dropped: 0 };
    return { figures, ahead };
  }
} finally {
  await stack.stop();
}

/** The run's table, the targets, and the closing JSON line. */
function report(
  concurrent: number,
  turns: TurnFigures[],
  {
    unmatched,
    failedCalls,
    answersAhead,
    openings,
  }: {
    unmatched: number;
    failedCalls: number;
    answersAhead: { taken: number; dropped: number };
    /** Per call: the stream's start (the answer) → the opening line's first audio at the client. */
    openings: number[];
  },
  lag: { p99: number; max: number },
): void {
  const column = (key: keyof TurnFigures) => turns.map((turn) => turn[key]);
  const row = (label: string, key: keyof TurnFigures) =>
    console.log(`| ${label} | ${pct(column(key), 50)} | ${pct(column(key), 95)} |`);
  const spreadMs = concurrent > 1 ? SPREAD_MS : 0; // one call has no others to spread from
  const starts = spreadMs > 0 ? `starts spread over ${spreadMs} ms` : 'started together';
  console.log(
    `\n${concurrent} concurrent call(s), ${starts}, ${TURNS} turns each, lines ${LINES === 'shared' ? 'in one rendering for all' : 'in a rendering per caller'}: ${turns.length} turns measured`,
  );
  if (failedCalls) console.log(`${failedCalls} of ${concurrent} calls failed before their last turn`);
  if (unmatched)
    console.log(
      `(${unmatched} turns left out: a line whose transcription failed, answered by the agent's apology, or a part not logged)`,
    );
  console.log(
    `opening line (its sentences made ahead at the stream's start): answer → first audio p50 ${pct(openings, 50)} ms, p95 ${pct(openings, 95)} ms (target ≤ ${OPENING_TARGET_MS} ms: ${pct(openings, 50) <= OPENING_TARGET_MS ? 'met' : 'missed'})`,
  );
  console.log('| per turn, ms | p50 | p95 |');
  console.log('|---|---:|---:|');
  row('voice-to-voice (end of caller audio → first agent audio at the client)', 'voiceToVoice');
  // With the model the turn's end is as detected (one of the four parts); by silence, the setting.
  if (TURN_DETECTION === 'model')
    row('end of turn, by the model (VAD end of speech → turn ended)', 'endpointed');
  else {
    console.log(`| endpointing (VOICE_ENDPOINTING_MS) | ${ENDPOINTING_MS} | ${ENDPOINTING_MS} |`);
    row('  as detected (VAD end of speech → turn ended)', 'endpointed');
  }
  row('STT after the turn ended (begun at the caller’s pause)', 'stt');
  row('  the transcription itself (request, queueing included)', 'sttOwn');
  row(
    `LLM to first sentence after the turn asked (stand-in: ${LLM_DELAY_MS} ms to first token)`,
    'llmFirstSentence',
  );
  row('TTS of the first sentence', 'ttsFirstSentence');
  row('service-added (voice-to-voice − the four above)', 'serviceAdded');
  if (TURN_DETECTION !== 'model') row('  detected endpointing beyond the setting', 'detectionExtra');
  row('  gateway: turn ended → transcript, beyond STT', 'gatewayIn');
  row(
    '  transcript → model asked (the gateway’s turn; the Temporal hops when the workflow takes it)',
    'temporalHops',
  );
  row('  gateway: first sentence → its audio sent, beyond TTS (control API, pacing)', 'gatewayOut');
  row('  edges: caller audio end ↔ VAD end of speech, socket both ways', 'edges');
  row('workflow fromSpeechEnd.firstAudioMs (VAD end of speech → audio sent)', 'workflowFirstAudio');
  const heardAhead = column('heardAhead').reduce((a, b) => a + b, 0);
  console.log(
    `turns heard ahead (transcription begun at the pause): ${heardAhead} of ${turns.length}; answers asked ahead: ${answersAhead.taken} taken by their turn, ${answersAhead.dropped} dropped (the caller went on)`,
  );
  console.log(
    `bench process event-loop lag: p99 ${lag.p99.toFixed(1)} ms, max ${lag.max.toFixed(1)} ms (the caller side paces 20 ms frames)`,
  );
  const parts: [string, keyof TurnFigures][] = [
    ['STT', 'stt'],
    ['LLM to first sentence', 'llmFirstSentence'],
    ['TTS of the first sentence', 'ttsFirstSentence'],
    ['service-added', 'serviceAdded'],
  ];
  const [dominant] = parts
    .map(([label, key]) => [label, pct(column(key), 50)] as const)
    .concat([
      TURN_DETECTION === 'model'
        ? ['end of turn', pct(column('endpointed'), 50)]
        : ['endpointing', ENDPOINTING_MS],
    ])
    .sort((a, b) => b[1] - a[1]);
  console.log(`largest part at p50: ${dominant[0]} (${dominant[1]} ms)`);
  const serviceP95 = pct(column('serviceAdded'), 95);
  const voiceP50 = pct(column('voiceToVoice'), 50);
  const voiceTarget = voiceToVoiceTargetMs(concurrent);
  console.log(
    `target voice-to-voice p50 ≤ ${voiceTarget} ms with ${concurrent} call(s): ${voiceP50 <= voiceTarget ? 'met' : 'missed'} (${voiceP50} ms)`,
  );
  console.log(
    `target service-added p95 ≤ ${SERVICE_ADDED_P95_TARGET_MS} ms (set for 10 concurrent calls): ${serviceP95 <= SERVICE_ADDED_P95_TARGET_MS ? 'met' : 'missed'} (${serviceP95} ms)`,
  );
  console.log(
    JSON.stringify({
      bench: 'voice',
      server: 'dev',
      concurrent,
      starts_spread_ms: spreadMs,
      lines: LINES,
      turns: turns.length,
      voice_to_voice_p50_ms: voiceP50,
      voice_to_voice_p95_ms: pct(column('voiceToVoice'), 95),
      service_added_p50_ms: pct(column('serviceAdded'), 50),
      service_added_p95_ms: serviceP95,
      stt_p50_ms: pct(column('sttOwn'), 50),
      stt_after_turn_p50_ms: pct(column('stt'), 50),
      heard_ahead_turns: heardAhead,
      answers_ahead_taken: answersAhead.taken,
      answers_ahead_dropped: answersAhead.dropped,
      preemptive_generation: PREEMPTIVE_GENERATION,
      llm_first_sentence_p50_ms: pct(column('llmFirstSentence'), 50),
      tts_first_sentence_p50_ms: pct(column('ttsFirstSentence'), 50),
      endpointing_ms: ENDPOINTING_MS,
      turn_detection: TURN_DETECTION,
      endpointed_p50_ms: pct(column('endpointed'), 50),
      failed_calls: failedCalls,
      opening_first_audio_p50_ms: pct(openings, 50),
      opening_first_audio_p95_ms: pct(openings, 95),
    }),
  );
}

function pct(values: number[], p: number): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);
}
