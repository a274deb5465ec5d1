import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { callWorkflowsPath } from '../../workers/workflow-code.js';

// The workflow bundles of the time-skipping call tests: the real call workflows, and the event
// sink (test/support/event-sink-workflows.ts) standing in for the webhooks queue.

export async function bundleCallTestWorkflows(): Promise<{
  calls: WorkflowBundle;
  eventSink: WorkflowBundle;
}> {
  const [calls, eventSink] = await Promise.all([
    bundleWorkflowCode({ workflowsPath: callWorkflowsPath, logger: quietLogger() }),
    bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./event-sink-workflows.ts', import.meta.url)),
      logger: quietLogger(),
    }),
  ]);
  return { calls, eventSink };
}

/** The bundler's logger: errors only. */
function quietLogger() {
  const noop = () => {};
  return { trace: noop, debug: noop, info: noop, warn: noop, error: console.error, log: noop };
}
