import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Orm } from '../db/orm.js';
import type { Settings } from '../lib/settings.js';
import { farEndWorkflowId, type TestCallerResult } from '../lib/temporal/workflow-contracts.js';
import {
  claimTestRunSlot,
  finishTestRun,
  judgeTestCall,
  loadTestRunProgress,
  startTestCall,
} from '../lib/test-runs/test-run-steps.js';

// A test run's steps (workflows/test-run-workflow.ts), each a call of lib/test-runs/ and safe to
// retry. They run on the calls task queue, beside the calls the run starts.

/** A test call's far end finishes moments after its call; past this its result is not waited for. */
const CALLER_RESULT_WAIT_MS = 30_000;

export function createTestRunActivities(deps: { orm: Orm; settings: Pick<Settings, 'taskQueuePrefix'> }) {
  const em = () => deps.orm.em.fork();
  return {
    async loadTestRunProgress(input: { testRunId: string }) {
      return loadTestRunProgress(em(), input.testRunId);
    },

    async claimTestRunSlot(input: { testRunId: string; workspaceId: string }) {
      return claimTestRunSlot(em(), input);
    },

    async startTestCall(input: { testRunId: string; position: number }) {
      return startTestCall(em(), deps.settings, input);
    },

    /** Judges the result: its call's analysis, and whether the simulated caller could play its part. */
    async judgeTestCall(input: {
      testRunId: string;
      position: number;
      callId: string | null;
      erroredBecause?: string;
    }) {
      const caller = input.callId && !input.erroredBecause ? await callerResult(input.callId) : null;
      return judgeTestCall(em(), { ...input, caller });
    },

    async finishTestRun(input: { testRunId: string; canceled: boolean }) {
      await finishTestRun(em(), input);
    },
  };
}

async function callerResult(callId: string): Promise<TestCallerResult | null> {
  const handle = Context.current().client.workflow.getHandle(farEndWorkflowId(callId));
  try {
    const result = await Promise.race([
      handle.result() as Promise<TestCallerResult>,
      new Promise<null>((resolve) => setTimeout(resolve, CALLER_RESULT_WAIT_MS, null).unref()),
    ]);
    return result;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return null;
    // A far end that failed or was terminated played no part worth judging.
    return {
      lines: 0,
      endedBy: 'caller',
      failure: `the simulated caller did not finish: ${(error as Error).message}`,
    };
  }
}

export type TestRunActivities = ReturnType<typeof createTestRunActivities>;
