import { defineEntity, p } from '@mikro-orm/core';
import { TestRun } from './test-run.js';

export const TEST_RESULT_STATUSES = ['pending', 'passed', 'failed', 'errored'] as const;
export type TestResultStatus = (typeof TEST_RESULT_STATUSES)[number];

/**
 * One simulated conversation of a test run: scenario `scenarioIndex`, its `run`-th time. A row
 * each, written by the run's workflow as its call starts (`callId`) and is judged (`status`,
 * `reason`), so concurrent calls never write the same row.
 */
const TestRunResultSchema = defineEntity({
  name: 'TestRunResult',
  tableName: 'test_run_results',
  uniques: [{ properties: ['testRun', 'position'] }],
  properties: {
    id: p.uuid().primary(),
    testRun: () => p.manyToOne(TestRun).mapToPk().deleteRule('cascade'),
    /** The order of the run's results: scenario by scenario, run by run. */
    position: p.integer(),
    scenarioIndex: p.integer(),
    run: p.integer(),
    callId: p.uuid().nullable(),
    status: p.string().length(20).$type<TestResultStatus>(),
    reason: p.text().nullable(),
  },
});

export class TestRunResult extends TestRunResultSchema.class {}
TestRunResultSchema.setClass(TestRunResult);

export { TestRunResultSchema };
