import { defineEntity, p } from '@mikro-orm/core';
import { Agent } from './agent.js';
import { Workspace } from './workspace.js';

export const TEST_RUN_STATUSES = ['queued', 'running', 'completed', 'canceled'] as const;
export type TestRunStatus = (typeof TEST_RUN_STATUSES)[number];

/** One simulated conversation to have with the agent (post-call spec section 2). */
export interface TestScenario {
  name: string;
  /** Who the language model plays as the caller, and what they want. */
  callerPrompt: string;
  /** What makes the conversation a success: the verdict of each of its calls' analysis. */
  successCriteria: string;
  /** At most this many caller lines; then the caller hangs up. */
  maxTurns: number;
}

/**
 * A test run: simulated callers, played by a language model, against one agent; each scenario
 * `runsPerScenario` times. Its results are rows of TestRunResult; one Temporal workflow
 * (`test-run-<id>`) runs it, with the calls as its children.
 */
const TestRunSchema = defineEntity({
  name: 'TestRun',
  tableName: 'test_runs',
  indexes: [
    { properties: ['agent', 'createdAt', 'id'] },
    // "At most 3 runs running per workspace" counts these.
    { properties: ['workspace', 'status'] },
  ],
  properties: {
    id: p.uuid().primary(),
    workspace: () => p.manyToOne(Workspace).mapToPk().deleteRule('cascade'),
    agent: () => p.manyToOne(Agent).mapToPk().deleteRule('cascade'),
    status: p.string().length(20).$type<TestRunStatus>(),
    scenarios: p.json().$type<TestScenario[]>(),
    runsPerScenario: p.integer(),
    createdAt: p.datetime().onCreate(() => new Date()),
    completedAt: p.datetime().nullable(),
  },
});

export class TestRun extends TestRunSchema.class {}
TestRunSchema.setClass(TestRun);

export { TestRunSchema };
