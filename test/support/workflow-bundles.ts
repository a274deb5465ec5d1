import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { workflowTracingModules } from '../../lib/tracing/tracing.js';
import { callWorkflowsPath } from '../../workers/workflow-code.js';
import { quietLogger } from './quiet-logger.js';

// Workflow bundles for tests, built quietly: the service's workflows (workflows/index.ts) or any
// other entry, and for the time-skipping call tests the real call workflows with the event sink
// (test/support/event-sink-workflows.ts) standing in for the webhooks queue.
//
// A bundle takes seconds of CPU to build and a run's code does not change while it runs, so under
// `npm test` (TEST_WORKFLOW_BUNDLES_DIR, a folder of the run) each bundle is built once per run and
// read by every file after; scripts/test.ts builds the common ones before the files start.

export const EVENT_SINK_WORKFLOWS_PATH = fileURLToPath(new URL('./event-sink-workflows.ts', import.meta.url));

/** A bundle of `workflowsPath` (default: every workflow of the service). */
export async function bundleWorkflows(workflowsPath = callWorkflowsPath): Promise<WorkflowBundle> {
  // A test that turned tracing on gets the workflows' spans too (test/tracing.test.ts).
  const interceptors = workflowTracingModules();
  const build = () =>
    bundleWorkflowCode({ workflowsPath, workflowInterceptorModules: interceptors, logger: quietLogger() });
  const dir = process.env.TEST_WORKFLOW_BUNDLES_DIR;
  if (!dir) return build();
  const key = createHash('sha256')
    .update(JSON.stringify([workflowsPath, interceptors]))
    .digest('hex');
  const file = path.join(dir, `${key.slice(0, 24)}.js`);
  const kept = await readFile(file, 'utf8').catch(() => null);
  if (kept !== null) return { code: kept };
  const bundle = await build();
  // Written whole or not at all: a file that starts meanwhile reads the finished bundle or builds its own.
  await mkdir(dir, { recursive: true });
  const partial = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(partial, bundle.code);
  await rename(partial, file);
  return { code: bundle.code };
}

export async function bundleCallTestWorkflows(): Promise<{
  calls: WorkflowBundle;
  eventSink: WorkflowBundle;
}> {
  const [calls, eventSink] = await Promise.all([
    bundleWorkflows(),
    bundleWorkflows(EVENT_SINK_WORKFLOWS_PATH),
  ]);
  return { calls, eventSink };
}
