import { condition, makeContinueAsNewFunc, patched, workflowInfo } from '@temporalio/workflow';
import type { AgentTurnResult } from '../../lib/calls/agent-turns.js';
import type { TurnsHandOver } from '../../lib/media/media-control.js';
import { type CallerSpeech, callerLineOf, type GatewayTurn } from '../../lib/temporal/call-messages.js';
import type { callWorkflow as CallWorkflowFunction } from '../call-workflow.js';
import { carrier, lastWords, live, records } from './activity-proxies.js';
import {
  AGENT_ERROR,
  agentFinishedAt,
  type CallState,
  conversationResume,
  type Ending,
} from './call-state.js';
import { Deadline, settleExpiry } from './deadline.js';
import { unlessMediaLost } from './media-loss.js';
import { watchMedia } from './media-session.js';
import { reportedTransfer } from './reported-transfer.js';
import { answeredByAtPickUp, onAnsweringMachine, screen } from './screen.js';
import { agentTurn, connectAgent, eventWith, failedForGood, now, release } from './steps.js';
import { offersTools, runToolCalls, TurnTools } from './tool-calls.js';
import { warmTransfer } from './warm-transfer.js';

/** Longest the agent waits for the other person to say something before it ends the call. */
const SILENCE_TIMEOUT_MS = 10 * 60_000;
/** Agent turns whose latency the `callProgress` query keeps (the most recent ones). */
const MAX_TURN_LATENCIES = 50;
/**
 * A conversation whose run has this many history events goes on in a new run (continue-as-new)
 * between two turns, so a call of any length stays far below Temporal's history limits (51,200
 * events, 50 MB; a warning at 10,240) and every run stays quick to replay: a turn is 5 to 10
 * events, so a run holds a few hundred turns.
 */
export const CONVERSATION_HISTORY_EVENTS = 2000;

/**
 * Converse: the call is answered, the agent joins with its opening line (or listens first), then
 * answers the person turn by turn until someone hangs up, the agent transfers the call, the line
 * stays silent or the agent cannot go on. Returns how the call ended, for `finish`.
 */
export async function converse(call: CallState): Promise<Ending> {
  if (call.input.resume) {
    // A long conversation's next run: answered and joined in an earlier run; its audio is still held.
    watchMedia(call);
  } else {
    // Who answered, when pick-up already tells (answering-machine detection): stored with the answer.
    const answeredAtPickUp = call.input.voicemail ? answeredByAtPickUp(call) : null;
    await records.markAnswered({
      callId: call.callId,
      answeredAt: now(),
      ...(answeredAtPickUp ? { answeredBy: answeredAtPickUp } : {}),
      ...eventWith(call, 'call.started'),
    });
    call.answered = true;
    watchMedia(call);
    call.setStatus('in_progress');
    call.step('connecting_agent');
    let listenFirst = false;
    if (call.input.voicemail && !answeredAtPickUp) {
      // A far end speaking at pick-up: who answered is decided before the agent speaks (workflows/call/screen.ts).
      if ((await screen(call)) === 'machine') {
        return onAnsweringMachine(call, call.input.voicemail.action, (lines) =>
          recordUnanswered(call, lines),
        );
      }
      // The far end spoke first (a person's "Hello, Kari here", a phone menu): the agent answers that.
      listenFirst = call.heard.length > 0;
    }
    try {
      call.lastAgentLine = await connectAgent(call, listenFirst);
    } catch (error) {
      if (!failedForGood(error)) throw error;
      return agentFailed(call, call.heard.splice(0));
    }
    call.nextIndex = call.lastAgentLine ? 1 : 0;
    call.progress.transcriptLines = call.nextIndex;
    call.step('in_conversation');
  }
  const silence = new Deadline(SILENCE_TIMEOUT_MS);
  try {
    for (;;) {
      const ending = await nextTurn(call, silence);
      if (ending) return ending;
      if (workflowInfo().historyLength >= CONVERSATION_HISTORY_EVENTS) break;
    }
  } finally {
    silence.stop();
  }
  // Between two turns: nothing of the call is in flight but its media session, which the next run
  // holds again (the gateway's activity of this run ends when this run does).
  // The search attributes (workspace, agent, status, direction) go along: the Web UI's lists and
  // the API's lookups keep finding the call.
  const goOn = makeContinueAsNewFunc<typeof CallWorkflowFunction>({
    typedSearchAttributes: workflowInfo().typedSearchAttributes,
  });
  return goOn({ ...call.input, resume: conversationResume(call) });
}

/** Someone speaks, or the call ends (true); or the silence timeout, one `Deadline` over every wait (false). */
async function someoneSpoke(call: CallState, silence: Deadline): Promise<boolean> {
  const spoke = () =>
    call.heard.length > 0 ||
    call.gatewayTurns.length > 0 ||
    call.hungUp !== null ||
    call.mediaLost ||
    call.mediaEnded ||
    call.speechFailed;
  silence.restart();
  await condition(() => spoke() || silence.expired);
  if (spoke()) return true;
  await settleExpiry();
  return false;
}

/** Waits for the person (or the silence timeout) and lets the agent answer; the ending once the call is over. */
async function nextTurn(call: CallState, silence: Deadline): Promise<Ending | null> {
  const { callId, heard } = call;
  await offerTurnsToGateway(call);
  if (!(await someoneSpoke(call, silence))) {
    await release(call, 'hang_up');
    return { endReason: 'silence_timeout', durationSeconds: agentFinishedAt(call.lastAgentLine) };
  }
  // A turn the gateway took happened before anything it signalled after it (a hang-up among them).
  const taken = call.gatewayTurns.shift();
  if (taken) return afterGatewayTurn(call, taken);
  // The stream ended without a hang-up reaching here (the gateway's signal lost or late): the
  // person is gone all the same, as of the last thing said.
  if (call.hungUp !== null || call.mediaEnded) {
    const unanswered = heard.splice(0);
    await keepWhatWasSaid(call, unanswered);
    await records.recordCallerLines({
      callId,
      lines: unanswered.map((speech) => callerLineOf(speech, call.nextIndex++)),
    });
    call.progress.transcriptLines = call.nextIndex;
    return { endReason: 'caller_hangup', durationSeconds: call.hungUp?.atSeconds ?? call.spokenSoFar() };
  }
  if (call.mediaLost || call.speechFailed) {
    // The gateway holding the call's audio died, or the person's speech cannot be recognised:
    // the agent cannot go on.
    return agentFailed(call, heard.splice(0));
  }
  const speech = heard.shift()!;
  await keepWhatWasSaid(call, [speech]);
  const heardLine = callerLineOf(speech, call.nextIndex);
  let turn: AgentTurnResult;
  try {
    turn = await unlessMediaLost(call, () =>
      agentTurn(call, {
        heard: heardLine,
        answerAtSeconds: speech.endedAtSeconds,
        ...(speech.speechTiming ? { speechTiming: speech.speechTiming } : {}),
        ...(call.toolCallCount > 0 ? { withStoredToolCalls: true } : {}),
      }),
    );
  } catch (error) {
    if (!failedForGood(error)) throw error;
    return agentFailed(call, [speech, ...heard.splice(0)]);
  }
  call.nextIndex = heardLine.index + 1;
  return actOnTurn(call, turn);
}

/**
 * The turn loop where the audio is: between turns, with nothing of the person's waiting, a call
 * whose audio a media gateway holds gets its turns taken there (docs/performance.md, "The turn
 * loop in the gateway"): the gateway answers the person without waiting for a workflow task and
 * reports each turn (`gatewayTurn`); this workflow stays the call's record and the authority on
 * its life. The gateway takes them only once every utterance it sent has arrived here, so the two
 * never write the same line; a turn that needs the workflow (tools, a transfer, a hang-up) hands
 * them back.
 */
async function offerTurnsToGateway(call: CallState): Promise<void> {
  const waiting = call.heard.length > 0 || call.gatewayTurns.length > 0;
  const over = call.hungUp !== null || call.mediaLost || call.mediaEnded || call.speechFailed;
  if (call.turnsInGateway || call.turnsStayHere || !call.media || waiting || over) return;
  // Calls that began before keep their turns here.
  if (!patched(TURNS_IN_GATEWAY)) {
    call.turnsStayHere = true;
    return;
  }
  let handOver: TurnsHandOver;
  try {
    handOver = await carrier.handOverTurns({
      callId: call.callId,
      nextIndex: call.nextIndex,
      heardThrough: Math.max(-1, ...call.utterancesSeen),
      withStoredToolCalls: call.toolCallCount > 0,
    });
  } catch (error) {
    if (!failedForGood(error)) throw error;
    // A gateway out of reach: the turns stay here (its loss, if it is lost, ends the call).
    handOver = 'never';
  }
  call.turnsInGateway = handOver === 'taken';
  call.turnsStayHere = handOver === 'never';
}

/** Patch id: a call whose audio a gateway holds may have its turns taken there. */
const TURNS_IN_GATEWAY = 'turns-in-gateway';

/** A turn the gateway took: its lines are written; the call's record follows it, and what it asks is done. */
async function afterGatewayTurn(call: CallState, taken: GatewayTurn): Promise<Ending | null> {
  if (taken.interrupted && call.lastAgentLine?.index === taken.interrupted.index) {
    call.lastAgentLine = { ...call.lastAgentLine, text: taken.interrupted.spokenText };
  }
  call.nextIndex = Math.max(call.nextIndex, taken.heard.index + 1);
  call.progress.transcriptLines = call.nextIndex;
  const turn = taken.result;
  // The gateway handed the turns back with a turn that needs this workflow (or could not answer).
  if (!turn || turn.toolCalls?.length || turn.next.kind !== 'continue') call.turnsInGateway = false;
  if (!turn) return agentFailed(call, call.heard.splice(0));
  return actOnTurn(call, turn);
}

/** The agent answered: its line is kept; its tools run, and the hang-up or transfer it asked for is done. */
async function actOnTurn(call: CallState, answer: AgentTurnResult): Promise<Ending | null> {
  const { callId, heard } = call;
  let turn = answer;
  tookTurn(call, turn);
  // The model called the agent's own tools: they run, and the model goes on with their results,
  // until it answers without them (the limits stop offering them: workflows/call/tool-calls.ts).
  const tools = new TurnTools();
  while (turn.toolCalls?.length) {
    // The person hung up while the tools ran: the next round ends the call as a hang-up.
    if (!(await runToolCalls(call, turn.toolCalls, Boolean(turn.line), tools))) return null;
    try {
      turn = await agentTurn(call, {
        index: call.nextIndex,
        answerAtSeconds: call.spokenSoFar(),
        toolExchanges: tools.exchanges,
        withStoredToolCalls: true,
        offerTools: offersTools(call, tools),
      });
    } catch (error) {
      if (!failedForGood(error)) throw error;
      return agentFailed(call, heard.splice(0));
    }
    tookTurn(call, turn);
  }
  const spokenUntil = turn.line ? agentFinishedAt(call.lastAgentLine) : call.spokenSoFar();
  if (turn.next.kind === 'hang_up') {
    // The last line carried the hang-up, unless the agent hung up without words.
    if (!turn.hungUp) await release(call, 'hang_up');
    return { endReason: 'agent_hangup', durationSeconds: spokenUntil };
  }
  if (turn.next.kind === 'transfer') {
    const transferred = { transferred_to: turn.next.to };
    // A report of an earlier attempt that came too late is not this one's (reported-transfer.ts).
    call.transferReport = null;
    let outcome: Awaited<ReturnType<typeof live.transferCall>>;
    try {
      const to = turn.next.to;
      outcome = await unlessMediaLost(call, () =>
        live.transferCall({
          callId,
          to,
          ...eventWith(call, 'call.transferred', transferred),
        }),
      );
    } catch (error) {
      if (!failedForGood(error)) throw error;
      return agentFailed(call, heard.splice(0));
    }
    // Histories from before the check answered nothing: those transfers were made.
    if (outcome && 'warm' in outcome) {
      // The turn's own words already said the caller is being put through; else the line for it.
      const holdLine = outcome.warm.message ?? (turn.line ? null : outcome.warm.say);
      return warmTransfer(call, turn.next.to, holdLine, (text) => sayOnItsOwn(call, text));
    }
    if (outcome && 'bridge' in outcome) {
      // Joined in the gateway holding the call's audio once the person answered (warm: briefed first).
      const { mode, message, say } = outcome.bridge;
      const holdLine = (mode === 'warm' ? message : null) ?? (turn.line ? null : say);
      return warmTransfer(call, turn.next.to, holdLine, (text) => sayOnItsOwn(call, text), {
        mode,
        bridged: true,
      });
    }
    if (outcome && 'reported' in outcome) {
      return reportedTransfer(call, turn.next.to, spokenUntil, (text) => sayOnItsOwn(call, text));
    }
    if (outcome?.transferred === false) {
      await sayOnItsOwn(call, outcome.say);
      return null;
    }
    return { endReason: 'transferred', durationSeconds: spokenUntil };
  }
  return null;
}

/**
 * A line the agent says to the caller on its own, outside the model's answers: the transfer was
 * not made (its target failed the check when used, or a warm transfer's person was not reached),
 * or the caller is told they are being connected. Best effort, like a tool's filler: a line that
 * cannot be said does not end the call.
 */
async function sayOnItsOwn(call: CallState, text: string): Promise<void> {
  const line = { index: call.nextIndex, role: 'agent' as const, text, offsetSeconds: call.spokenSoFar() };
  call.nextIndex += 1;
  call.lastAgentLine = line;
  call.progress.transcriptLines = call.nextIndex;
  try {
    await unlessMediaLost(call, () => live.sayLine({ callId: call.callId, line }));
  } catch (error) {
    if (!failedForGood(error)) throw error;
  }
}

/**
 * The agent's answer is in: its line is the last one said (a turn may act without a line: a tool
 * call without words), and its latency is kept for `callProgress`.
 */
function tookTurn(call: CallState, turn: AgentTurnResult): void {
  if (turn.line) {
    call.lastAgentLine = turn.line;
    call.nextIndex = turn.line.index + 1;
  }
  call.progress.transcriptLines = call.nextIndex;
  if (turn.latency) {
    call.progress.agentTurns.push(turn.latency);
    if (call.progress.agentTurns.length > MAX_TURN_LATENCIES) call.progress.agentTurns.shift();
  }
}

/**
 * A live step failed past its retry budget: the agent cannot go on. What the person said that the
 * agent never answered is kept, the agent apologises (best effort) and the far end is released;
 * the call then completes `agent_error`.
 */
async function agentFailed(call: CallState, unanswered: CallerSpeech[]): Promise<Ending> {
  await recordUnanswered(call, unanswered);
  // A lost gateway has no one to apologise to.
  if (call.hungUp === null && !call.mediaLost && !call.mediaEnded) await apologize(call);
  await release(call, 'hang_up');
  return { endReason: AGENT_ERROR, durationSeconds: call.spokenSoFar() };
}

/**
 * Barge-in: the person spoke over an agent line, which stopped; its transcript line keeps only
 * the sentences that had started playing. (Only calls with audio are interrupted.)
 */
async function keepWhatWasSaid(call: CallState, speeches: CallerSpeech[]): Promise<void> {
  for (const { interrupted } of speeches) {
    if (!interrupted) continue;
    await records.keepSpokenPart({ callId: call.callId, ...interrupted });
    if (call.lastAgentLine?.index === interrupted.index) {
      call.lastAgentLine = { ...call.lastAgentLine, text: interrupted.spokenText };
    }
  }
}

async function recordUnanswered(call: CallState, unanswered: CallerSpeech[]): Promise<void> {
  if (unanswered.length === 0) return;
  await keepWhatWasSaid(call, unanswered);
  const lines = unanswered.map((speech) => callerLineOf(speech, call.nextIndex++));
  await records.recordCallerLines({ callId: call.callId, lines });
  call.progress.transcriptLines = call.nextIndex;
}

/** The agent's short apology, stored and played; a failure to say it does not stop the call from ending. */
async function apologize(call: CallState): Promise<void> {
  try {
    const line = await lastWords.apologize({
      callId: call.callId,
      index: call.nextIndex,
      offsetSeconds: call.spokenSoFar(),
    });
    call.lastAgentLine = line;
    call.nextIndex = Math.max(call.nextIndex, line.index + 1);
    call.progress.transcriptLines = call.nextIndex;
  } catch (error) {
    if (!failedForGood(error)) throw error;
  }
}
