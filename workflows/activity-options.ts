import type { ActivityOptions, Duration, LocalActivityOptions, RetryPolicy } from '@temporalio/common';
import { TOOL_CALL_ATTEMPTS } from '../lib/temporal/tool-calls.js';

// Every activity's timeouts and retry policy the workflows use, in one place. Changing one changes
// running workflows: keep them unless the budget itself changes (docs/calls.md, "Retry budgets").
//
// The database writes are idempotent (unique keys, conditional updates), so they are retried
// until the database is back, however long it takes. A PostgreSQL restart (about 30 s) must never
// end a call early: every step that touches the database survives at least that.

/** Failure types the call activities throw that no retry can fix (activities/calls.ts). */
const CALL_NON_RETRYABLE = ['CallNotFound', 'AnalysisRejectedError'];

/** Until it succeeds: no attempt limit, backing off to 1 minute (steps of workflows that run on their own). */
const UNTIL_IT_SUCCEEDS: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
};

/** A call step's retries: waits doubling from `initialInterval` up to `maximumInterval`; the call's refusals are not retried. */
function callRetry(
  initialInterval: Duration,
  maximumInterval: Duration,
  maximumAttempts?: number,
): RetryPolicy {
  return {
    initialInterval,
    backoffCoefficient: 2,
    maximumInterval,
    ...(maximumAttempts ? { maximumAttempts } : {}),
    nonRetryableErrorTypes: CALL_NON_RETRYABLE,
  };
}

/** A local activity: a backoff over 1 s (`localRetryThreshold`) waits on a durable timer. */
function local(
  startToCloseTimeout: Duration,
  retry: RetryPolicy,
  scheduleToCloseTimeout?: Duration,
): LocalActivityOptions {
  return {
    startToCloseTimeout,
    ...(scheduleToCloseTimeout ? { scheduleToCloseTimeout } : {}),
    localRetryThreshold: '1 second',
    retry,
  };
}

/** A call's database writes: no attempt limit, backing off to 30 s. */
const UNTIL_THE_DATABASE_IS_BACK = callRetry('1 second', '30 seconds');

/** A call's live steps: attempts every 5 s at most, without an attempt limit (the budget is the schedule-to-close). */
const LIVE_RETRY = callRetry('500 milliseconds', '5 seconds');

/**
 * A call's database writes, as local activities: quick, retried until the database is back; a
 * backoff over `localRetryThreshold` waits on a durable timer.
 */
export const CALL_DATABASE_WRITES = local('10 seconds', UNTIL_THE_DATABASE_IS_BACK);

/** A call's requests to the carrier (dial, release), as local activities: a caller will not wait long. */
export const CALL_CARRIER_REQUESTS = local('15 seconds', callRetry('500 milliseconds', '5 seconds', 5));

/**
 * A call's live steps that also read or write the database, as local activities: attempts every
 * 5 s at most, without an attempt limit, for up to 75 s in all. That outlasts a 30 s database
 * outage even when the attempt running as it ends hangs for its whole 15 s (30 + 15 + 5 = 50 s),
 * yet still ends a call whose agent truly cannot go on within about a minute and a quarter.
 */
export const CALL_LIVE_STEPS = local('15 seconds', LIVE_RETRY, '75 seconds');

/**
 * A live step whose effect outlives a workflow task that fails (a transfer joined in the gateway):
 * as an activity, its scheduling is in the history before it runs, so a replay (news that came
 * meanwhile, such as the caller's media ending) finds it taken, not a path not taken. The live
 * steps' timeouts and retries.
 */
export const CALL_LIVE_STEPS_RECORDED: ActivityOptions = {
  startToCloseTimeout: '15 seconds',
  scheduleToCloseTimeout: '75 seconds',
  retry: LIVE_RETRY,
};

/** What an attempt of an agent step takes beyond the runtime's own answer: the database, the carrier. */
const AGENT_STEP_MARGIN_MS = 5_000;
/** The live steps' budget beyond one attempt: a 30 s database outage, a backoff, and room to spare. */
const LIVE_BUDGET_BEYOND_ONE_ATTEMPT_MS = 60_000;

/**
 * The agent's steps (connectAgent, agentTurn) when its runtime calls out (a language model), as
 * activities an operator sees pending: each attempt may take the runtime's timeout
 * (`VOICE_LLM_TIMEOUT_MS`) and a margin, the whole step one more minute (75 s at the default 10 s),
 * with the live steps' retries.
 */
export function CALL_AGENT_STEPS_CALLING_OUT(runtimeTimeoutMs: number): ActivityOptions {
  const attemptMs = runtimeTimeoutMs + AGENT_STEP_MARGIN_MS;
  return {
    startToCloseTimeout: attemptMs,
    scheduleToCloseTimeout: attemptMs + LIVE_BUDGET_BEYOND_ONE_ATTEMPT_MS,
    heartbeatTimeout: '5 seconds',
    retry: LIVE_RETRY,
  };
}

/**
 * The same steps as local activities, inside the call's workflow task: no activity task to
 * schedule, dispatch and complete, and no second workflow task per turn (about half of a turn's
 * Temporal cost; docs/performance.md, "Turn latency at scale"). Same timeouts and retries; the
 * worker keeps the workflow task alive while an answer takes long, and a backoff over 1 s waits
 * on a durable timer (a Retry-After, a retry late in the budget).
 */
export function CALL_AGENT_STEPS_CALLING_OUT_LOCAL(runtimeTimeoutMs: number): LocalActivityOptions {
  const attemptMs = runtimeTimeoutMs + AGENT_STEP_MARGIN_MS;
  return local(
    attemptMs,
    { ...LIVE_RETRY, maximumAttempts: AGENT_STEP_ATTEMPTS_IN_TASK },
    attemptMs + LIVE_BUDGET_BEYOND_ONE_ATTEMPT_MS,
  );
}

/**
 * A local activity's schedule-to-close is wall-clock time in the worker, while its backoffs over
 * 1 s are timers: a server that skips time (the tests') would otherwise retry without end within
 * it. 12 attempts back off 0.5 + 1 + 2 + 4 + 5 × 7 = 42.5 s, which still outlasts a 30 s
 * database outage; the minute beyond the first attempt still bounds the whole step.
 */
const AGENT_STEP_ATTEMPTS_IN_TASK = 12;

/** The agent's apology before it hangs up on a call it cannot go on with: best effort, a few seconds. */
export const CALL_APOLOGY: ActivityOptions = {
  startToCloseTimeout: '10 seconds',
  heartbeatTimeout: '5 seconds',
  retry: callRetry('500 milliseconds', '2 seconds', 3),
};

/** About 62 s of waits over 6 attempts, so a 30 s database outage does not exhaust it either. */
const ANALYSIS_RETRY = callRetry('2 seconds', '1 minute', 6);

/** The analysis by an analyzer that calls out (a language model): longer attempts that heartbeat. */
export const CALL_ANALYSIS_CALLING_OUT: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: ANALYSIS_RETRY,
};

/** The analysis by an analyzer that answers in the worker (the transcript rules), as a local activity. */
export const CALL_ANALYSIS_IN_WORKER = local('2 minutes', ANALYSIS_RETRY);

/** What the call's worker says about its runtime (a local activity that answers at once). */
export const CALL_RUNTIME_QUESTION: LocalActivityOptions = {
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
};

/**
 * A far end's callbacks into its call (the simulated carrier, the test panel's browser), as local
 * activities; a call that cannot be reached after these attempts is taken as gone.
 */
export const FAR_END_CALLBACKS = local('10 seconds', {
  initialInterval: '200 milliseconds',
  backoffCoefficient: 2,
  maximumAttempts: 5,
});

/** A campaign's step: reads and writes many rows and starts calls, so it heartbeats; until it succeeds. */
export const CAMPAIGN_STEP: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '20 seconds',
  retry: UNTIL_IT_SUCCEEDS,
};

/** The webhooks' bookkeeping steps (recording deliveries, taking a recovery's events): until they succeed. */
export const WEBHOOK_BOOKKEEPING: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '10 seconds',
  retry: UNTIL_IT_SUCCEEDS,
};

/**
 * One delivery attempt: up to 30 s waiting for a free slot to the endpoint, 10 s for the receiver,
 * and the log. Retries here cover our own failures (database, worker crash), not the receiver's
 * answer (that is the delivery schedule, lib/webhooks/retry-schedule.ts).
 */
export const WEBHOOK_DELIVERY_ATTEMPT: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { ...UNTIL_IT_SUCCEEDS, maximumAttempts: 10 },
};

/**
 * A call's media session (`holdMedia`, on the task queue of the gateway that holds the call's
 * audio): it runs as long as the call's audio, heartbeating; a gateway that dies stops the
 * heartbeats, and the call ends within `heartbeatTimeout` instead of waiting out its silence
 * timeout. One attempt: a session is the audio of one process, it cannot be taken up again. A
 * call never lasts the start-to-close (the longest a call may last, docs/voice.md).
 */
export const CALL_MEDIA_SESSION: ActivityOptions = {
  scheduleToStartTimeout: '15 seconds',
  startToCloseTimeout: '4 hours',
  heartbeatTimeout: '10 seconds',
  retry: { maximumAttempts: 1 },
};

/** What an attempt of a tool step takes beyond the tool's own timeout: the database, the row. */
const TOOL_STEP_MARGIN_MS = 5_000;

/**
 * One tool call of an agent (agent-tools spec section 3) on the tools task queue: each attempt the
 * tool's `timeout_seconds` and a margin; three attempts, after about 0.5 s and 1 s (a tool's
 * `Retry-After` up to 5 s replaces the wait); a killed worker is noticed at the 5 s heartbeat and
 * the next attempt carries the same id. The last attempt's passing failure comes back as an
 * answer (`failed`), not a failure.
 */
export function TOOL_CALL(timeoutSeconds: number, taskQueue: string): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout: timeoutSeconds * 1000 + TOOL_STEP_MARGIN_MS,
    // Waiting for a tools worker is not the tool's fault, but a turn cannot wait for ever.
    scheduleToStartTimeout: '30 seconds',
    heartbeatTimeout: '5 seconds',
    retry: {
      initialInterval: '500 milliseconds',
      backoffCoefficient: 2,
      maximumInterval: '1 second',
      maximumAttempts: TOOL_CALL_ATTEMPTS,
      nonRetryableErrorTypes: CALL_NON_RETRYABLE,
    },
  };
}

/**
 * A test caller's next line from the language model: a few attempts over about half a minute for
 * passing trouble; then the caller hangs up and its result is `errored`.
 */
export const TEST_CALLER_LINE: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '20 seconds',
    maximumAttempts: 4,
  },
};

/** A test run's database steps (claim, start a call, judge it, finish): until the database is back. */
export const TEST_RUN_STEP: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: UNTIL_IT_SUCCEEDS,
};

/** A pass of recording retention: goes through every recording, so minutes; a few tries, then the next hour's. */
export const RECORDING_RETENTION_STEP: ActivityOptions = {
  startToCloseTimeout: '30 minutes',
  retry: {
    initialInterval: '10 seconds',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 5,
  },
};
