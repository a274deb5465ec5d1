import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { startCallWorkflow } from '../lib/calls/start-call-workflow.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { createAgentFixture, createQueuedCall } from '../test/support/call-fixtures.js';
import { runWorkers, startTimeSkippingCallStack } from '../test/support/time-skipping-call-stack.js';
import { add, type Cost, costOf } from './history-cost.js';

// What one call costs in Temporal, per simulator scenario: the call workflow and its simulated far
// end run on the SDK's time-skipping test server (the workflow tests' stack, real PostgreSQL), and
// their histories are counted: workflow tasks, activities, local activities (markers), timers,
// signals received and sent, child workflows, history events. The counts are deterministic: they
// depend on the workflow code, not on the machine.
//
//   npm run bench -- call-cost        (BENCH_COST_FIXTURES=1 also counts test/fixtures/workflow-histories)

const HistoryProto = proto.temporal.api.history.v1.History;

const COLUMNS: [keyof Cost, string][] = [
  ['workflowTasks', 'workflow tasks'],
  ['activities', 'activities'],
  ['localActivities', 'local activities'],
  ['timers', 'timers'],
  ['signalsIn', 'signals in'],
  ['signalsOut', 'signals sent'],
  ['children', 'child workflows'],
  ['events', 'history events'],
];

function table(rows: [string, Cost][]): string {
  const head = `| scenario | ${COLUMNS.map(([, label]) => label).join(' | ')} |`;
  const rule = `|---|${COLUMNS.map(() => '---:').join('|')}|`;
  const body = rows.map(([name, cost]) => `| ${name} | ${COLUMNS.map(([key]) => cost[key]).join(' | ')} |`);
  return [head, rule, ...body].join('\n');
}

const SCENARIOS: [string, string][] = [
  ['5678', 'answered conversation (5678)'],
  ['2002', 'transfer (2002)'],
  ['1001', 'busy (1001)'],
  ['1002', 'no answer, ring timeout (1002)'],
];

const stack = await startTimeSkippingCallStack({ prefix: 'cost' });
const rows: [string, Cost][] = [];
const summary: Record<string, Cost> = {};
try {
  const fixture = await createAgentFixture(stack.db.orm, { name: 'Ada' });
  for (const [to, name] of SCENARIOS) {
    await stack.withEnvironment(async (env) => {
      // A transfer needs a target (lib/voice-runtime/transfer-target.ts).
      const call = await createQueuedCall(stack.db.orm, fixture, {
        to,
        metadata: { transfer_to: '+4722998877' },
      });
      await runWorkers(await stack.workers(env), async () => {
        await startCallWorkflow(env.client, stack.settings, call);
        await env.client.workflow.getHandle(callWorkflowId(call.id)).result();
        await stack.settle(env, call.id);
      });
      const histories = await stack.callHistories(env, call.id);
      const [callCost, farEndCost] = histories.map(({ history }) => costOf(history));
      rows.push([`${name}: call`, callCost!], [`${name}: far end`, farEndCost!]);
      rows.push([`${name}: **both**`, add(callCost!, farEndCost!)]);
      summary[to] = add(callCost!, farEndCost!);
    });
  }
} finally {
  await stack.close();
}
console.log(table(rows));

if (process.env.BENCH_COST_FIXTURES === '1') {
  const dir = fileURLToPath(new URL('../test/fixtures/workflow-histories', import.meta.url));
  const fixtures = readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file): [string, Cost] => [
      file,
      costOf(HistoryProto.fromObject(JSON.parse(readFileSync(path.join(dir, file), 'utf8')))),
    ]);
  console.log(`\ncommitted histories (${dir}):\n${table(fixtures)}`);
}
console.log(JSON.stringify({ bench: 'call-cost', server: 'time-skipping', per_call: summary }));
