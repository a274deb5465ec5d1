import { startCallWorkflow } from '../lib/calls/start-call-workflow.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { createAgentFixture, createQueuedCall } from '../test/support/call-fixtures.js';
import { runWorkers, startTimeSkippingCallStack } from '../test/support/time-skipping-call-stack.js';

const stack = await startTimeSkippingCallStack({ prefix: 'dump' });
const fixture = await createAgentFixture(stack.db.orm, { name: 'Ada' });
await stack.withEnvironment(async (env) => {
  const call = await createQueuedCall(stack.db.orm, fixture, { to: '+4791265678' });
  await runWorkers(await stack.workers(env), async () => {
    await startCallWorkflow(env.client, stack.settings, call);
    await env.client.workflow.getHandle(callWorkflowId(call.id)).result();
    await stack.settle(env, call.id);
  });
  const h = await env.client.workflow.getHandle(callWorkflowId(call.id)).fetchHistory();
  for (const e of h.events ?? []) {
    const m = e.markerRecordedEventAttributes;
    if (!m) continue;
    const d = Object.fromEntries(
      Object.entries(m.details ?? {}).map(([k, v]) => [
        k,
        (v.payloads ?? []).map((p) => Buffer.from(p.data!).toString()),
      ]),
    );
    console.log(m.markerName, JSON.stringify(d), m.failure ? 'FAILED' : '');
  }
});
await stack.close();
