import type { EntityManager } from '@mikro-orm/postgresql';
import { type TestRun, TestRunResult } from '../../db/entities/index.js';

// The TestRun object (post-call spec section 2) and the reads it is made from: the run's row and
// its results' rows, in position order (scenario by scenario, run by run).

/** At most 3 of a workspace's runs are `running` at once; more wait `queued`. */
export const MAX_RUNNING_TEST_RUNS = 3;

export function presentTestRun(run: TestRun, results: TestRunResult[]) {
  const count = (status: string) => results.filter((result) => result.status === status).length;
  return {
    object: 'test_run',
    id: run.id,
    agent_id: run.agent,
    status: run.status,
    created_at: run.createdAt.toISOString(),
    completed_at: run.completedAt ? run.completedAt.toISOString() : null,
    summary: { passed: count('passed'), failed: count('failed'), errored: count('errored') },
    results: results.map((result) => ({
      scenario: run.scenarios[result.scenarioIndex]?.name ?? '',
      run: result.run,
      call_id: result.callId ?? null,
      status: result.status,
      reason: result.reason ?? null,
    })),
  };
}

/** The results of each of `runs`, in position order. */
export async function resultsOf(em: EntityManager, runs: TestRun[]): Promise<Map<string, TestRunResult[]>> {
  const byRun = new Map<string, TestRunResult[]>(runs.map((run) => [run.id, []]));
  if (runs.length === 0) return byRun;
  const rows = await em.find(
    TestRunResult,
    { testRun: { $in: runs.map((run) => run.id) } },
    { orderBy: { testRun: 'asc', position: 'asc' } },
  );
  for (const row of rows) byRun.get(row.testRun)?.push(row);
  return byRun;
}
