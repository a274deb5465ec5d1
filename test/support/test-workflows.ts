import { sleep, upsertSearchAttributes } from '@temporalio/workflow';
import { WorkspaceIdKey } from '../../lib/temporal/search-attributes.js';

// Workflows that exist only to exercise the Temporal test support (test/temporal-support.test.ts).

/** Sleeps for `days` days of workflow time and returns how much workflow time passed, in ms. */
export async function longSleepWorkflow(days: number): Promise<number> {
  const started = Date.now();
  await sleep(`${days} days`);
  return Date.now() - started;
}

/** Tags itself with a WorkspaceId search attribute, so a test can find it by that attribute. */
export async function taggedWorkflow(workspaceId: string): Promise<string> {
  upsertSearchAttributes([{ key: WorkspaceIdKey, value: workspaceId }]);
  return workspaceId;
}
