import proto from '@temporalio/proto';
import type { AnsweredBy } from '../db/entities/index.js';
import { startCallWorkflow } from '../lib/calls/start-call-workflow.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { createAgentFixture, createQueuedCall, storedCall } from '../test/support/call-fixtures.js';
import { runWorkers, startTimeSkippingCallStack } from '../test/support/time-skipping-call-stack.js';
import { BENCH_MACHINES, BENCH_PEOPLE, benchNumber } from '../workflows/bench-answers.js';

// Answering-machine detection, measured (telephony spec section 6): every answer of the simulator's
// bench set (workflows/bench-answers.ts: 40 voicemail greetings in five languages, long and short,
// with and without a beep; 40 people picking up, most saying something first) is dialled by the
// call workflow on the SDK's time-skipping server (SIM_TIME_SCALE 1, so the 4 s limit and the
// greetings' lengths are real simulated seconds) with detection on and `hang_up`. Reported:
// precision and recall of `machine`, and the decision's time after the answer (from the `answered`
// callback to the `judgeAnswer` step in the call's history), p50 and p95.
//
//   npm run bench -- amd          targets: precision ≥ 0.95, recall ≥ 0.90, decision p95 ≤ 4 s

type History = proto.temporal.api.history.v1.IHistory;
const EventType = proto.temporal.api.enums.v1.EventType;

/** A payload's text: its data as bytes, or base64 in a history read as JSON. */
const payloadText = (payloads: { data?: Uint8Array | string | null }[] | null | undefined) =>
  (payloads ?? [])
    .map(({ data }) =>
      typeof data === 'string'
        ? Buffer.from(data, 'base64').toString()
        : data
          ? Buffer.from(data).toString()
          : '',
    )
    .join(' ');
const millis = (time: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(time?.seconds ?? 0) * 1000 + Math.round((time?.nanos ?? 0) / 1e6);

/**
 * Milliseconds from the `answered` callback to the decision, read from the call's history: when the
 * workflow decided (the start of the task that took the `judgeAnswer` step) and when the decision
 * was stored (that step's marker, at the task's end).
 */
function decisionMs(history: History): { decided: number; stored: number } {
  let answeredAt: number | null = null;
  let taskStartedAt = 0;
  for (const event of history.events ?? []) {
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED)
      taskStartedAt = millis(event.eventTime);
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED && answeredAt === null) {
      const signal = event.workflowExecutionSignaledEventAttributes;
      if (
        signal?.signalName === 'carrierCallback' &&
        /"answered"/.test(payloadText(signal.input?.payloads))
      ) {
        answeredAt = millis(event.eventTime);
      }
    }
    if (event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED && answeredAt !== null) {
      const details = event.markerRecordedEventAttributes?.details ?? {};
      const text = Object.values(details)
        .map((value) => payloadText(value.payloads))
        .join(' ');
      if (text.includes('judgeAnswer')) {
        return { decided: taskStartedAt - answeredAt, stored: millis(event.eventTime) - answeredAt };
      }
    }
  }
  throw new Error('no decision in the call history');
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

interface Answer {
  truth: 'machine' | 'human';
  to: string;
  what: string;
}
const answers: Answer[] = [
  ...BENCH_MACHINES.map((machine, at) => ({
    truth: 'machine' as const,
    to: benchNumber('machine', at),
    what: `${machine.greeting}${machine.beep ? ' [beep]' : ''}`,
  })),
  ...BENCH_PEOPLE.map((words, at) => ({
    truth: 'human' as const,
    to: benchNumber('person', at),
    what: words ?? '(silent)',
  })),
];

const stack = await startTimeSkippingCallStack({ prefix: 'amd', logLevel: 'ERROR' });
const results: (Answer & { answeredBy: AnsweredBy | null; ms: { decided: number; stored: number } })[] = [];
try {
  const fixture = await createAgentFixture(stack.db.orm, { name: 'Ada' });
  const snapshot = { voicemail: { detect: true, action: 'hang_up' as const, message: null } };
  for (const answer of answers) {
    await stack.withEnvironment(async (env) => {
      const call = await createQueuedCall(stack.db.orm, fixture, { to: answer.to, snapshot });
      await runWorkers(await stack.workers(env), async () => {
        await startCallWorkflow(env.client, stack.settings, call);
        await env.client.workflow.getHandle(callWorkflowId(call.id)).result();
      });
      const [callHistory] = await stack.callHistories(env, call.id);
      const { call: stored } = await storedCall(stack.db.orm, call.id);
      results.push({ ...answer, answeredBy: stored.answeredBy ?? null, ms: decisionMs(callHistory.history) });
    });
  }
} finally {
  await stack.close();
}

const saidMachine = results.filter((r) => r.answeredBy === 'machine');
const truePositives = saidMachine.filter((r) => r.truth === 'machine').length;
const machines = results.filter((r) => r.truth === 'machine').length;
const precision = saidMachine.length ? truePositives / saidMachine.length : 1;
const recall = truePositives / machines;
const decided = results.map((r) => r.ms.decided);
const times = results.map((r) => r.ms.stored);
const missed = results.filter((r) => (r.truth === 'machine') !== (r.answeredBy === 'machine'));
for (const r of missed) console.log(`  wrong: ${r.truth} judged ${r.answeredBy}: ${r.what}`);
console.log(
  `${results.length} answers (${machines} machines): precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)}, decision stored p50 ${percentile(times, 50)} ms, p95 ${percentile(times, 95)} ms (decided p95 ${percentile(decided, 95)} ms)`,
);
console.log(
  JSON.stringify({
    bench: 'amd',
    answers: results.length,
    machines,
    precision: Number(precision.toFixed(3)),
    recall: Number(recall.toFixed(3)),
    // Stored: answered_by written, the target's measure. Decided: the workflow woke with what it needed.
    decision_ms: { p50: percentile(times, 50), p95: percentile(times, 95), max: Math.max(...times) },
    decided_ms: { p50: percentile(decided, 50), p95: percentile(decided, 95) },
    targets: { precision: 0.95, recall: 0.9, decision_p95_ms: 4000 },
    met: precision >= 0.95 && recall >= 0.9 && percentile(times, 95) <= 4000,
  }),
);
