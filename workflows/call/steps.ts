import { TemporalFailure } from '@temporalio/common';
import { isCancellation, patched } from '@temporalio/workflow';
import type { CallActivities, CallEventToWrite } from '../../activities/calls.js';
import type { CallEventType } from '../../db/entities/index.js';
import type { CallEventExtra } from '../../lib/calls/call-events.js';
import type { CallRuntime } from '../../lib/temporal/call-runtime.js';
import {
  agentCallingOut,
  agentCallingOutInTask,
  analysis,
  analysisInWorker,
  carrier,
  live,
  runtime,
} from './activity-proxies.js';
import type { CallState } from './call-state.js';

// Steps more than one phase of the call takes.

/**
 * A step of `call` failed for good (its retries ran out or it cannot be retried); not a
 * cancellation. An activity's failure comes as an ActivityFailure, a local activity's as the
 * failure itself (an ApplicationFailure, a TimeoutFailure): both are TemporalFailures.
 */
export function failedForGood(error: unknown): boolean {
  return !isCancellation(error) && error instanceof TemporalFailure;
}

/** Workflow time as an ISO timestamp, for the rows the activities write. */
export function now(): string {
  return new Date().toISOString();
}

/** How the call's agent and analyzer run, asked of the worker once (lib/temporal/call-runtime.ts). */
async function runtimeOf(call: CallState): Promise<CallRuntime> {
  call.runtime ??= await runtime.callRuntime();
  return call.runtime;
}

/**
 * The proxy of the agent's steps: local activities for a runtime in the worker, activities for one
 * that calls out. (Not returned from an async function: awaiting a proxy would ask it for `then`.)
 */
function agentStepsOf({ agentTimeoutMs }: CallRuntime) {
  if (agentTimeoutMs === null) return live;
  // A language model's turns run inside the workflow task since `agent-turns-in-task` (about half
  // of a turn's Temporal cost; docs/performance.md "Turn latency at scale"); calls that began
  // before go on with activities.
  return patched(AGENT_TURNS_IN_TASK)
    ? agentCallingOutInTask(agentTimeoutMs)
    : agentCallingOut(agentTimeoutMs);
}

/** Patch id: the agent's steps on a runtime that calls out are local activities. */
const AGENT_TURNS_IN_TASK = 'agent-turns-in-task';

/**
 * The agent joins the answered call (with its opening line, or none: it listens first, as it
 * does when the far end already spoke: `listenFirst`).
 */
export async function connectAgent(
  call: CallState,
  listenFirst = false,
): ReturnType<CallActivities['connectAgent']> {
  return agentStepsOf(await runtimeOf(call)).connectAgent({
    callId: call.callId,
    ...(listenFirst ? { listenFirst } : {}),
  });
}

/** One agent turn; the agent's last line carries its hang-up. */
export async function agentTurn(
  call: CallState,
  input: Omit<Parameters<CallActivities['agentTurn']>[0], 'callId' | 'hangUpWithLastLine'>,
): ReturnType<CallActivities['agentTurn']> {
  return agentStepsOf(await runtimeOf(call)).agentTurn({
    callId: call.callId,
    ...input,
    hangUpWithLastLine: true,
  });
}

/** The configured analyzer's answer: a local activity, or an activity for an analyzer that calls out. */
export async function analyzeWithAnalyzer(call: CallState): ReturnType<CallActivities['analyzeCall']> {
  const proxy = (await runtimeOf(call)).analyzerCallsOut ? analysis : analysisInWorker;
  return proxy.analyzeCall({ callId: call.callId });
}

/** The event a status change writes in the same step (`{ event }` to spread into the step's input). */
export function eventWith(
  call: CallState,
  type: CallEventType,
  extra?: CallEventExtra,
): { event: CallEventToWrite } {
  return { event: { type, occurredAt: now(), extra, fanOutTaskQueue: call.input.eventsTaskQueue } };
}

/** Ends the far end from our side, best effort: a carrier that cannot be reached does not stop the call from ending. */
export async function release(call: CallState, reason: 'hang_up' | 'cancel'): Promise<void> {
  try {
    await carrier.releaseCall({ callId: call.callId, reason });
  } catch (error) {
    if (!failedForGood(error)) throw error;
  }
}
