import {
  condition,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  startChild,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import type { TestRunActivities } from '../activities/test-runs.js';
import type { TestRunStatus } from '../db/entities/index.js';
import { callSearchAttributes } from '../lib/temporal/search-attributes.js';
import {
  cancelTestRunSignal,
  type TestResultProgress,
  testCallerHangUpSignal,
  testRunProgressQuery,
} from '../lib/temporal/test-run-messages.js';
import {
  CALL_WORKFLOW,
  type CallWorkflow,
  callWorkflowId,
  farEndWorkflowId,
  type TestRunWorkflowInput,
  type TestRunWorkflowResult,
} from '../lib/temporal/workflow-contracts.js';
import { callWorkflowMetadata } from '../lib/temporal/workflow-metadata.js';
import { TEST_RUN_STEP } from './activity-options.js';

// A test run (post-call spec section 2), `test-run-<id>`: waits for one of the workspace's three
// running slots, then has each scenario's conversations, at most five calls at once, each call a
// child workflow (`call-<id>`) whose far end is a caller the language model plays. Each result is
// judged as its call ends; the results live in PostgreSQL (GET /test-runs/{id}) and in the
// `testRunProgress` query. A cancel starts no more calls and hangs up the ones under way.

const steps = proxyActivities<TestRunActivities>(TEST_RUN_STEP);

/** At most this many of a run's calls go at once (lib/test-runs/test-run-resource.ts). */
const CALLS_AT_ONCE = 5;
/** How often a run waiting for a slot, or a call waiting for the trial line, looks again. */
const WAIT_AGAIN = '5 seconds';
/** How often a hang-up is sent again to a far end that is not there yet. */
const HANG_UP_AGAIN_MS = 2_000;

export async function testRunWorkflow(input: TestRunWorkflowInput): Promise<TestRunWorkflowResult> {
  const { testRunId } = input;
  let status: TestRunStatus = 'queued';
  let canceled = false;
  setHandler(cancelTestRunSignal, () => {
    canceled = true;
  });
  // Answered from the first task on (empty until the results are read).
  const results: TestResultProgress[] = [];
  setHandler(testRunProgressQuery, () => ({ status, results }));
  results.push(...(await steps.loadTestRunProgress({ testRunId })));

  while (!canceled) {
    const claim = await steps.claimTestRunSlot({ testRunId, workspaceId: input.workspaceId });
    if (claim === 'running') status = 'running';
    if (claim === 'canceled') canceled = true;
    if (claim !== 'full') break;
    await condition(() => canceled, WAIT_AGAIN);
  }

  const toRun = results.filter((result) => result.status === 'pending');
  const lane = async () => {
    for (let next = toRun.shift(); next && !canceled; next = toRun.shift()) {
      const judged = await converse(input, next.position, {
        isCanceled: () => canceled,
        // The API canceled it and its signal was lost: the database says so.
        cancel: () => {
          canceled = true;
        },
        started: (callId) => {
          next.call_id = callId;
        },
      });
      if (judged) results[judged.position] = judged;
    }
  };
  await Promise.all(Array.from({ length: Math.min(CALLS_AT_ONCE, toRun.length) }, lane));

  await steps.finishTestRun({ testRunId, canceled });
  status = canceled ? 'canceled' : 'completed';
  // What the finish wrote (pending results of a canceled run are errored now).
  results.splice(0, results.length, ...(await steps.loadTestRunProgress({ testRunId })));
  const count = (what: string) => results.filter((result) => result.status === what).length;
  return { status, passed: count('passed'), failed: count('failed'), errored: count('errored') };
}

/**
 * One result's conversation: its call made and run as a child, then judged. Null when the run was
 * canceled before its call could start (the finish marks it).
 */
async function converse(
  input: TestRunWorkflowInput,
  position: number,
  run: { isCanceled: () => boolean; cancel: () => void; started: (callId: string) => void },
): Promise<TestResultProgress | null> {
  const { testRunId } = input;
  const { isCanceled } = run;
  let start = await steps.startTestCall({ testRunId, position });
  while (!start.started && start.wait) {
    if (await condition(isCanceled, WAIT_AGAIN)) return null;
    start = await steps.startTestCall({ testRunId, position });
  }
  if (!start.started && 'canceled' in start) {
    run.cancel();
    return null;
  }
  if (!start.started) {
    return steps.judgeTestCall({ testRunId, position, callId: null, erroredBecause: start.reason });
  }
  const { callId } = start;
  run.started(callId);
  let erroredBecause: string | undefined;
  try {
    const child = await startChild<CallWorkflow>(CALL_WORKFLOW, {
      workflowId: callWorkflowId(callId),
      taskQueue: input.callsTaskQueue,
      args: [start.input],
      // A call goes on to its end (and its analysis) whatever becomes of the run.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      ...callWorkflowMetadata(start.input),
      typedSearchAttributes: callSearchAttributes(start.input, 'ringing'),
    });
    let ended = false;
    const result = child.result().finally(() => {
      ended = true;
    });
    // A cancel hangs the caller up; its far end may not be there yet, so it is told again.
    await condition(() => ended || isCanceled());
    while (!ended) {
      erroredBecause = 'The run was canceled while this call was under way.';
      try {
        await getExternalWorkflowHandle(farEndWorkflowId(callId)).signal(testCallerHangUpSignal);
        break;
      } catch {
        await condition(() => ended, HANG_UP_AGAIN_MS);
      }
    }
    await result;
  } catch (error) {
    erroredBecause ??= `The call's workflow failed: ${(error as Error).message}`;
  }
  return steps.judgeTestCall({ testRunId, position, callId, erroredBecause });
}
