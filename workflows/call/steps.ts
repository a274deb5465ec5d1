import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import { isCancellation } from '@temporalio/workflow';
import type { CallActivities, CallEventToWrite } from '../../activities/calls.js';
import type { CallEventType } from '../../db/entities/index.js';
import type { CallEventExtra } from '../../lib/calls/call-events.js';
import { RUNS_AS_ACTIVITY } from '../../lib/temporal/failure-types.js';
import { analysis, analysisLocal, carrier, live, liveWithDatabase } from './activity-proxies.js';
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

/** A local activity refused because its port calls out: it must run as an activity. */
function runsAsActivity(error: unknown): boolean {
  for (let failure = error; failure instanceof Error; failure = failure.cause) {
    if (failure instanceof ApplicationFailure && failure.type === RUNS_AS_ACTIVITY) return true;
  }
  return false;
}

/**
 * Runs an agent step as a local activity first; a voice runtime that calls out refuses that at
 * once, and from then on the call's agent steps are activities.
 */
async function agentStep<T>(
  call: CallState,
  step: (proxy: typeof liveWithDatabase) => Promise<T>,
): Promise<T> {
  if (!call.agentCallsOut) {
    try {
      return await step(live);
    } catch (error) {
      if (!runsAsActivity(error)) throw error;
      call.agentCallsOut = true;
    }
  }
  return step(liveWithDatabase);
}

/** The agent joins the answered call (with its opening line, or none: it listens first). */
export function connectAgent(call: CallState): ReturnType<CallActivities['connectAgent']> {
  return agentStep(call, (proxy) => proxy.connectAgent({ callId: call.callId }));
}

/** One agent turn; the agent's last line carries its hang-up. */
export function agentTurn(
  call: CallState,
  input: Omit<Parameters<CallActivities['agentTurn']>[0], 'callId' | 'hangUpWithLastLine'>,
): ReturnType<CallActivities['agentTurn']> {
  const turn = { callId: call.callId, ...input, hangUpWithLastLine: true };
  return agentStep(call, (proxy) => proxy.agentTurn(turn));
}

/**
 * The configured analyzer's answer: as a local activity first, unless the analyzer calls out (a
 * language model), which refuses that at once and runs as an activity.
 */
export async function analyzeWithAnalyzer(call: CallState): ReturnType<CallActivities['analyzeCall']> {
  try {
    return await analysisLocal.analyzeCall({ callId: call.callId });
  } catch (error) {
    if (!runsAsActivity(error)) throw error;
  }
  return analysis.analyzeCall({ callId: call.callId });
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
