import type { Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { TestRun } from '../../db/entities/index.js';
import type { Settings } from '../settings.js';
import { WorkspaceIdKey } from '../temporal/search-attributes.js';
import { startOnce } from '../temporal/start-once.js';
import { taskQueues } from '../temporal/task-queues.js';
import { cancelTestRunSignal } from '../temporal/test-run-messages.js';
import {
  TEST_RUN_WORKFLOW,
  type TestRunWorkflow,
  type TestRunWorkflowInput,
  testRunWorkflowId,
} from '../temporal/workflow-contracts.js';
import { testRunMetadata } from '../temporal/workflow-metadata.js';

// How the API starts a test run's workflow and cancels it. The workflow id is the run's, so
// starting twice runs it once; a cancel is sent with signal-with-start, so a run whose start was
// never confirmed still ends (canceled) when it is canceled.

function startOptions(settings: Pick<Settings, 'taskQueuePrefix'>, run: TestRun) {
  const queues = taskQueues(settings);
  const input: TestRunWorkflowInput = {
    testRunId: run.id,
    workspaceId: run.workspace,
    callsTaskQueue: queues.calls,
  };
  return {
    workflowId: testRunWorkflowId(run.id),
    taskQueue: queues.calls,
    args: [input] as [TestRunWorkflowInput],
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    ...testRunMetadata(input),
    typedSearchAttributes: [{ key: WorkspaceIdKey, value: run.workspace }],
  };
}

export async function startTestRunWorkflow(
  client: Client,
  settings: Pick<Settings, 'taskQueuePrefix'>,
  run: TestRun,
): Promise<void> {
  await client.workflow.start<TestRunWorkflow>(TEST_RUN_WORKFLOW, startOptions(settings, run));
}

export async function cancelTestRunWorkflow(
  client: Client,
  settings: Pick<Settings, 'taskQueuePrefix'>,
  run: TestRun,
): Promise<void> {
  // A run that finished just now (closed) needs no cancel: the start is refused, and that is fine.
  await startOnce(
    client.workflow.signalWithStart<TestRunWorkflow, []>(TEST_RUN_WORKFLOW, {
      ...startOptions(settings, run),
      signal: cancelTestRunSignal,
      signalArgs: [],
    }),
  );
}
