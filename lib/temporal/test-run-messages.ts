import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { TestResultStatus, TestRunStatus } from '../../db/entities/index.js';

// The messages of a test run's workflow (`test-run-<id>`) and of its calls' far ends.

/** POST /test-runs/{id}/cancel: no more calls start; the calls under way are hung up. */
export const cancelTestRunSignal = defineSignal('cancelTestRun');

/** One result as the run knows it, in the API's words. */
export interface TestResultProgress {
  position: number;
  scenario: string;
  run: number;
  call_id: string | null;
  status: TestResultStatus;
  reason: string | null;
}

export interface TestRunProgress {
  status: TestRunStatus;
  results: TestResultProgress[];
}

/** The results so far, for operators in the Temporal Web UI and for tests. */
export const testRunProgressQuery = defineQuery<TestRunProgress>('testRunProgress');

/** To a test call's far end: hang up now (the run was canceled). */
export const testCallerHangUpSignal = defineSignal('testCallerHangUp');
