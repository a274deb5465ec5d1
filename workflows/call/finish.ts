import { log } from '@temporalio/workflow';
import type { CallActivities } from '../../activities/calls.js';
import type { CallWorkflowResult } from '../../lib/temporal/workflow-contracts.js';
import { records } from './activity-proxies.js';
import { AGENT_ERROR, type CallState, type Ending, type FailReason } from './call-state.js';
import { analyzeWithAnalyzer, eventWith, failedForGood, now, release } from './steps.js';

/** Finish a call never answered: it ends `failed`, with `call.failed`. */
export async function fail(call: CallState, reason: FailReason): Promise<CallWorkflowResult> {
  call.failedWith = reason;
  call.progress.endReason = reason;
  await records.markFailed({
    callId: call.callId,
    reason,
    endedAt: now(),
    ...eventWith(call, 'call.failed', { reason }),
  });
  call.setStatus('failed');
  call.step('failed');
  return { status: 'failed', endReason: reason, durationSeconds: null };
}

/**
 * Finish an answered call: record how it ended (once: a repeat keeps the first ending), then the
 * analysis; only then is the call completed, with `call.completed`.
 */
export async function complete(call: CallState, ending: Ending): Promise<CallWorkflowResult> {
  if (call.ended === null) {
    const durationSeconds = Math.round(ending.durationSeconds);
    call.step('hanging_up');
    call.progress.endReason = ending.endReason;
    await records.markEnded({
      callId: call.callId,
      endedAt: now(),
      durationSeconds,
      endReason: ending.endReason,
    });
    call.ended = { endReason: ending.endReason, durationSeconds };
  }
  const how = call.ended;
  call.step('analyzing');
  const result = await analyze(call);
  await records.completeCall({
    callId: call.callId,
    analysis: result,
    analyzedAt: now(),
    ...eventWith(call, 'call.completed'),
  });
  call.setStatus('completed');
  call.step('completed');
  return { status: 'completed', endReason: how.endReason, durationSeconds: how.durationSeconds };
}

/** The configured analyzer's answer; when it gives up (or refuses), the built-in transcript rules answer. */
async function analyze(call: CallState): ReturnType<CallActivities['analyzeCall']> {
  try {
    return await analyzeWithAnalyzer(call);
  } catch (error) {
    if (!failedForGood(error)) throw error;
    // They only read the transcript, so they are retried like a database write.
    return await records.analyzeCall({ callId: call.callId, fallback: true });
  }
}

/**
 * Last resort: whatever failed, the call is not left unfinished. Every step from here is on
 * `records` (retried until the database is back) or best effort, and repeats of what already
 * happened are harmless (events are written once per call and type, ended_at and the analysis once).
 */
export async function finishAfterFailure(call: CallState, error: unknown): Promise<CallWorkflowResult> {
  log.error('call workflow failed; finishing the call', { callId: call.callId, error: `${error}` });
  if (call.failedWith !== null) return fail(call, call.failedWith);
  if (!call.answered) {
    if (call.farEndReached) await release(call, call.connected ? 'hang_up' : 'cancel');
    return fail(call, 'not_connected');
  }
  if (call.ended === null) await release(call, 'hang_up');
  return complete(call, { endReason: AGENT_ERROR, durationSeconds: call.spokenSoFar() });
}
