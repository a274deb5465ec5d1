import { ApplicationFailure } from '@temporalio/common';
import {
  type CallerLine,
  type CallerModel,
  CallerModelError,
  type CallerTurn,
} from '../lib/test-runs/caller-model.js';

// The simulated caller's one step that calls out: its next line from the language model. It runs
// on the carrier simulator's task queue, beside the far ends; passing trouble is retried by
// Temporal, a refusal is not (the caller then hangs up and the result is `errored`).

export function createTestCallerActivities(deps: { callerModel: CallerModel | null }) {
  return {
    async testCallerLine(input: { callerPrompt: string; conversation: CallerTurn[] }): Promise<CallerLine> {
      if (!deps.callerModel) {
        throw ApplicationFailure.nonRetryable(
          'no language model plays test callers on this worker',
          'CallerModelMissing',
        );
      }
      try {
        return await deps.callerModel.nextLine(input.callerPrompt, input.conversation);
      } catch (error) {
        if (error instanceof CallerModelError && !error.retryable) {
          throw ApplicationFailure.nonRetryable(error.message, 'CallerModelRejected');
        }
        throw error;
      }
    },
  };
}

export type TestCallerActivities = ReturnType<typeof createTestCallerActivities>;
