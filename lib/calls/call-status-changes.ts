import type { EntityManager } from '@mikro-orm/postgresql';
import { type AnsweredBy, Call, type CallStatus, type CallTransfer } from '../../db/entities/index.js';
import type { CallAnalysisResult } from '../analysis/analyzer.js';

// The call's row as its workflow moves it on (activities/calls.ts runs each as a step). Every
// change is safe to repeat: a retried step finds the first one's values and keeps them.

/** The call the workflow runs for is gone (its workspace was deleted): no retry brings it back. */
export class CallMissingError extends Error {
  override name = 'CallMissingError';
  constructor(callId: string) {
    super(`call ${callId} does not exist`);
  }
}

export async function loadCall(em: EntityManager, callId: string): Promise<Call> {
  const call = await em.findOne(Call, { id: callId });
  if (!call) throw new CallMissingError(callId);
  return call;
}

async function updateCall(em: EntityManager, callId: string, change: (call: Call) => void): Promise<void> {
  const call = await loadCall(em, callId);
  change(call);
  await em.flush();
}

export function markRinging(em: EntityManager, callId: string): Promise<void> {
  return updateCall(em, callId, (call) => {
    if (call.status === 'queued') call.status = 'ringing';
  });
}

/** `answeredBy`: who answered, when it is known at pick-up (answering-machine detection). */
export function markAnswered(
  em: EntityManager,
  callId: string,
  answeredAt: Date,
  answeredBy?: AnsweredBy,
): Promise<void> {
  return updateCall(em, callId, (call) => {
    call.status = 'in_progress';
    call.answeredAt ??= answeredAt;
    if (answeredBy) call.answeredBy ??= answeredBy;
  });
}

/** The transfer as it stands; `transferred_to` only once it connected. */
export function recordTransfer(em: EntityManager, callId: string, transfer: CallTransfer): Promise<void> {
  return updateCall(em, callId, (call) => {
    call.transfer = transfer;
    if (transfer.status === 'connected') call.transferredTo = transfer.to;
  });
}

export function markEnded(
  em: EntityManager,
  input: { callId: string; endedAt: Date; durationSeconds: number; endReason: string },
): Promise<void> {
  return updateCall(em, input.callId, (call) => {
    // The workflow's clock stands still through its local steps: a transfer connected in one of
    // them (wall clock) is no later than the call's end.
    const connectedAt = call.transfer?.connected_at ? new Date(call.transfer.connected_at) : null;
    call.endedAt ??= connectedAt && connectedAt > input.endedAt ? connectedAt : input.endedAt;
    call.durationSeconds ??= input.durationSeconds;
    call.endReason ??= input.endReason;
  });
}

export function markFailed(
  em: EntityManager,
  input: { callId: string; reason: string; endedAt: Date },
): Promise<void> {
  return updateCall(em, input.callId, (call) => {
    call.status = 'failed';
    call.endReason = input.reason;
    call.endedAt ??= input.endedAt;
  });
}

/** Completed, with its analysis (the first one written stays). */
export function markCompleted(
  em: EntityManager,
  input: { callId: string; analysis: CallAnalysisResult; analyzedAt: string },
): Promise<void> {
  return updateCall(em, input.callId, (call) => {
    call.status = 'completed' satisfies CallStatus;
    call.analysis ??= { ...input.analysis, created_at: input.analyzedAt };
  });
}
