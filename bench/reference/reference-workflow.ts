import { proxyActivities } from '@temporalio/workflow';

// The reference workload of the benches (bench/reference/reference.ts): one workflow, one activity.

const { touch } = proxyActivities<{ touch(n: number): Promise<number> }>({
  startToCloseTimeout: '30 seconds',
});

export async function referenceWorkflow(n: number): Promise<number> {
  return touch(n);
}
