import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { workflowTracingModules } from '../../lib/tracing/tracing.js';
import { callWorkflowsPath } from '../../workers/workflow-code.js';
import { quietLogger } from './quiet-logger.js';

// Workflow bundles for tests, built quietly: the service's workflows (workflows/index.ts) or any
// other entry, and for the time-skipping call tests the real call workflows with the event sink
// (test/support/event-sink-workflows.ts) standing in for the webhooks queue.

/** A bundle of `workflowsPath` (default: every workflow of the service). */
export function bundleWorkflows(workflowsPath = callWorkflowsPath): Promise<WorkflowBundle> {
  // A test that turned tracing on gets the workflows' spans too (test/tracing.test.ts).
  return bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: workflowTracingModules(),
    logger: quietLogger(),
  });
}

export async function bundleCallTestWorkflows(): Promise<{
  calls: WorkflowBundle;
  eventSink: WorkflowBundle;
}> {
  const [calls, eventSink] = await Promise.all([
    bundleWorkflows(),
    bundleWorkflows(fileURLToPath(new URL('./event-sink-workflows.ts', import.meta.url))),
  ]);
  return { calls, eventSink };
}
