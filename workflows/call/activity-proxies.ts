import type { RetryPolicy } from '@temporalio/common';
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { CallActivities } from '../../activities/calls.js';

// The call workflow's activities, one proxy per retry budget (docs/calls.md, "Retry budgets").
// Each proxy exposes only the activities that belong to its budget, so calling a step with the
// wrong timeouts does not compile. Changing an option here changes running calls: keep them as
// they are unless the budget itself changes.
//
// The database writes are idempotent (unique keys, conditional updates), so they are retried
// until the database is back, however long it takes. A PostgreSQL restart (about 30 s) must never
// end a call early: every step that touches the database survives at least that.

/** Failure types the call activities throw that no retry can fix (activities/calls.ts). */
const NON_RETRYABLE = ['CallNotFound', 'AnalysisRejectedError'];

/** The built-in transcript analysis only: `analyzeCall` with `fallback: true`. */
interface FallbackAnalysis {
  analyzeCall(
    input: Parameters<CallActivities['analyzeCall']>[0] & { fallback: true },
  ): ReturnType<CallActivities['analyzeCall']>;
}

/** The steps that only write to the database (and the fallback analysis, which only reads). */
type DatabaseWrites = Pick<
  CallActivities,
  'markRinging' | 'markAnswered' | 'markEnded' | 'markFailed' | 'recordCallerLines' | 'completeCall'
> &
  FallbackAnalysis;

/** Until the database is back: no attempt limit, backing off to 30 s. */
const UNTIL_THE_DATABASE_IS_BACK: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  nonRetryableErrorTypes: NON_RETRYABLE,
};

/**
 * Database writes, as local activities: each is one marker in the history instead of three events
 * and a workflow task of its own. Quick, retried until the database is back (no attempt limit), so
 * they outlast a database outage; a backoff over `localRetryThreshold` waits on a durable timer.
 * The fallback analysis runs here too: it only reads the transcript.
 */
export const records = proxyLocalActivities<DatabaseWrites>({
  startToCloseTimeout: '10 seconds',
  localRetryThreshold: '1 second',
  retry: UNTIL_THE_DATABASE_IS_BACK,
});

/** Requests to the carrier only (dial, release) during a live call: a caller will not wait long. */
export const carrier = proxyLocalActivities<Pick<CallActivities, 'dial' | 'releaseCall'>>({
  startToCloseTimeout: '15 seconds',
  localRetryThreshold: '1 second',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '5 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});

/** The live-call steps that also read or write the database. */
type LiveSteps = Pick<CallActivities, 'answerIncoming' | 'connectAgent' | 'agentTurn' | 'transferCall'>;

/** Attempts every 5 s at most, without an attempt limit (the budget is the 75 s schedule-to-close). */
const LIVE_RETRY: RetryPolicy = {
  initialInterval: '500 milliseconds',
  backoffCoefficient: 2,
  maximumInterval: '5 seconds',
  nonRetryableErrorTypes: NON_RETRYABLE,
};

/**
 * Live-call steps that also read or write the database (answerIncoming, connectAgent, agentTurn,
 * transferCall): attempts every 5 s at most, without an attempt limit, for up to 75 s in all. That
 * outlasts a 30 s database outage even when the attempt running as it ends hangs for its whole
 * 15 s (30 + 15 + 5 = 50 s), yet still ends a call whose agent truly cannot go on within about a
 * minute and a quarter (the call then ends `agent_error`, or `not_connected` before the answer).
 */
export const liveWithDatabase = proxyActivities<LiveSteps>({
  startToCloseTimeout: '15 seconds',
  scheduleToCloseTimeout: '75 seconds',
  heartbeatTimeout: '5 seconds',
  retry: LIVE_RETRY,
});

/**
 * The live steps as local activities (workflows/call/steps.ts): the same 75 s budget, one marker each instead of three events and the workflow task their
 * completion wakes. connectAgent and agentTurn run here only for a voice runtime that answers in
 * the worker (the scripted agent); for one that calls out (a language model) they refuse at once
 * (`RunsAsActivity`) and run on `liveWithDatabase`, so a slow model turn is never held inside a
 * workflow task and shows as a pending activity.
 */
export const live = proxyLocalActivities<LiveSteps>({
  startToCloseTimeout: '15 seconds',
  scheduleToCloseTimeout: '75 seconds',
  localRetryThreshold: '1 second',
  retry: LIVE_RETRY,
});

/**
 * The agent's apology before it hangs up on a call it cannot go on with (`apologize`): best effort,
 * a few seconds at most, as whatever stopped the agent may stop this too.
 */
export const lastWords = proxyActivities<Pick<CallActivities, 'apologize'>>({
  startToCloseTimeout: '10 seconds',
  heartbeatTimeout: '5 seconds',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '2 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});

/** About 62 s of waits over 6 attempts, so a 30 s database outage does not exhaust it either. */
const ANALYSIS_RETRY: RetryPolicy = {
  initialInterval: '2 seconds',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 6,
  nonRetryableErrorTypes: NON_RETRYABLE,
};

/**
 * The analysis may call a language model: longer attempts that heartbeat, retried with backoff.
 * When it gives up, the built-in transcript rules answer on `records` (they only read the database).
 */
export const analysis = proxyActivities<Pick<CallActivities, 'analyzeCall'>>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: ANALYSIS_RETRY,
});

/**
 * The analysis as a local activity, with the same retries, for an analyzer
 * that answers in the worker (the transcript rules); one that calls out refuses (`RunsAsActivity`)
 * and runs on `analysis`.
 */
export const analysisLocal = proxyLocalActivities<Pick<CallActivities, 'analyzeCall'>>({
  startToCloseTimeout: '2 minutes',
  localRetryThreshold: '1 second',
  retry: ANALYSIS_RETRY,
});
