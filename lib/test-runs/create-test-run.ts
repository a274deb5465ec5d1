import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { TestRun, TestRunResult, type TestScenario } from '../../db/entities/index.js';

/**
 * Writes a test run (`queued`) and a `pending` result for each scenario's each run, in the
 * caller's transaction; the workflow that runs it is started after the commit.
 */
export async function createTestRun(
  em: EntityManager,
  input: { workspaceId: string; agentId: string; scenarios: TestScenario[]; runsPerScenario: number },
): Promise<{ run: TestRun; results: TestRunResult[] }> {
  const run = em.create(TestRun, {
    id: randomUUID(),
    workspace: input.workspaceId,
    agent: input.agentId,
    status: 'queued',
    scenarios: input.scenarios,
    runsPerScenario: input.runsPerScenario,
    completedAt: null,
  });
  const results: TestRunResult[] = [];
  for (const [scenarioIndex] of input.scenarios.entries()) {
    for (let run_ = 1; run_ <= input.runsPerScenario; run_++) {
      results.push(
        em.create(TestRunResult, {
          id: randomUUID(),
          testRun: run.id,
          position: results.length,
          scenarioIndex,
          run: run_,
          callId: null,
          status: 'pending',
          reason: null,
        }),
      );
    }
  }
  await em.flush();
  return { run, results };
}
