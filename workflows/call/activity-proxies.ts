import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { AnsweringMachineActivities } from '../../activities/answering-machines.js';
import type { CallRuntimeActivities } from '../../activities/call-runtime.js';
import type { CallActivities } from '../../activities/calls.js';
import type { ToolActivity } from '../../lib/temporal/tool-calls.js';
import {
  CALL_AGENT_STEPS_CALLING_OUT,
  CALL_AGENT_STEPS_CALLING_OUT_LOCAL,
  CALL_ANALYSIS_CALLING_OUT,
  CALL_ANALYSIS_IN_WORKER,
  CALL_APOLOGY,
  CALL_CARRIER_REQUESTS,
  CALL_DATABASE_WRITES,
  CALL_LIVE_STEPS,
  CALL_LIVE_STEPS_RECORDED,
  CALL_RUNTIME_QUESTION,
  TOOL_CALL,
} from '../activity-options.js';

// The call workflow's activities, one proxy per budget (workflows/activity-options.ts, docs/calls.md
// "Retry budgets"). Each proxy exposes only the activities that belong to its budget, so calling a
// step with the wrong timeouts does not compile. The agent's steps and the analysis run as local
// activities when their port answers in the worker, as activities when it calls out: the call asks
// the worker which before the first of them (`runtime`, lib/temporal/call-runtime.ts).

/** The built-in transcript analysis only: `analyzeCall` with `fallback: true`. */
interface FallbackAnalysis {
  analyzeCall(
    input: Parameters<CallActivities['analyzeCall']>[0] & { fallback: true },
  ): ReturnType<CallActivities['analyzeCall']>;
}

/** The steps that only write to the database (and the fallback analysis, which only reads). */
type DatabaseWrites = Pick<
  CallActivities,
  | 'markRinging'
  | 'markAnswered'
  | 'markEnded'
  | 'markFailed'
  | 'recordCallerLines'
  | 'keepSpokenPart'
  | 'recordToolCall'
  | 'completeCall'
> &
  FallbackAnalysis;

/** Database writes (and the fallback analysis, which only reads the transcript), as local activities. */
export const records = proxyLocalActivities<DatabaseWrites>(CALL_DATABASE_WRITES);

/** Requests to the carrier only (dial, release) during a live call. */
export const carrier =
  proxyLocalActivities<Pick<CallActivities, 'dial' | 'releaseCall' | 'handOverTurns'>>(CALL_CARRIER_REQUESTS);

/** The live-call steps that also read or write the database. */
type LiveSteps = Pick<
  CallActivities,
  'answerIncoming' | 'connectAgent' | 'agentTurn' | 'transferCall' | 'settleReportedTransfer' | 'sayLine'
>;

/** The live steps as local activities: answerIncoming, transferCall, sayLine, and the agent's steps when its runtime answers in the worker. */
export const live = proxyLocalActivities<LiveSteps>(CALL_LIVE_STEPS);

/** Who answered an outbound call: judged and stored (a database write, workflows/call/screen.ts). */
export const screening =
  proxyLocalActivities<Pick<AnsweringMachineActivities, 'judgeAnswer'>>(CALL_DATABASE_WRITES);

/**
 * The message left on an answering machine: written and played, a live step whose effect outlives a
 * workflow task that fails (recorded: a replay that meanwhile heard the greeting's late words finds
 * the message taken, rather than leaving it a second time after them).
 */
export const voicemail =
  proxyActivities<Pick<AnsweringMachineActivities, 'leaveVoicemail'>>(CALL_LIVE_STEPS_RECORDED);

/** The same as a local activity, before `voicemail-recorded` (kept while such calls may run). */
export const voicemailInTask =
  proxyLocalActivities<Pick<AnsweringMachineActivities, 'leaveVoicemail'>>(CALL_LIVE_STEPS);

/** The agent's steps when its runtime calls out, with timeouts derived from the runtime's (`VOICE_LLM_TIMEOUT_MS`). */
export function agentCallingOut(runtimeTimeoutMs: number) {
  return proxyActivities<Pick<CallActivities, 'connectAgent' | 'agentTurn'>>(
    CALL_AGENT_STEPS_CALLING_OUT(runtimeTimeoutMs),
  );
}

/** The same as local activities (`agent-turns-in-task`). */
export function agentCallingOutInTask(runtimeTimeoutMs: number) {
  return proxyLocalActivities<Pick<CallActivities, 'connectAgent' | 'agentTurn'>>(
    CALL_AGENT_STEPS_CALLING_OUT_LOCAL(runtimeTimeoutMs),
  );
}

/** The agent's apology before it hangs up on a call it cannot go on with (`apologize`): best effort. */
export const lastWords = proxyActivities<Pick<CallActivities, 'apologize'>>(CALL_APOLOGY);

/** The analysis by an analyzer that calls out (a language model). */
export const analysis = proxyActivities<Pick<CallActivities, 'analyzeCall'>>(CALL_ANALYSIS_CALLING_OUT);

/** The analysis by an analyzer that answers in the worker (the transcript rules). */
export const analysisInWorker =
  proxyLocalActivities<Pick<CallActivities, 'analyzeCall'>>(CALL_ANALYSIS_IN_WORKER);

/**
 * One of the agent's own tools, as an activity named for it on the tools task queue, and the
 * options to schedule it with (lib/temporal/tool-calls.ts).
 */
export function toolStep(name: string, timeoutSeconds: number, taskQueue: string) {
  const options = TOOL_CALL(timeoutSeconds, taskQueue);
  return { options, run: proxyActivities<Record<string, ToolActivity>>(options)[name] };
}

/** How this worker's agent and analyzer run. */
export const runtime = proxyLocalActivities<CallRuntimeActivities>(CALL_RUNTIME_QUESTION);
