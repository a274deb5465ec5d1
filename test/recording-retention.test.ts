import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Client, Connection, ScheduleOverlapPolicy } from '@temporalio/client';
import { Call, Workspace } from '../db/entities/index.js';
import { startCallWorkflow } from '../lib/calls/start-call-workflow.js';
import { FileRecordingStore } from '../lib/recordings/recording-files.js';
import { expireRecordings } from '../lib/recordings/retention.js';
import { ensureRecordingRetentionSchedule } from '../lib/recordings/retention-schedule.js';
import {
  callWorkflowId,
  RECORDING_RETENTION_WORKFLOW,
  type RecordingRetentionWorkflow,
  recordingRetentionScheduleId,
} from '../lib/temporal/workflow-contracts.js';
import {
  type AgentFixture,
  createAgentFixture,
  createQueuedCall,
  storedCall,
} from './support/call-fixtures.js';
import { keepHistory } from './support/kept-histories.js';
import { sharedDevServer } from './support/temporal.js';
import {
  runWorkers,
  startTimeSkippingCallStack,
  type TimeSkippingCallStack,
} from './support/time-skipping-call-stack.js';

// Recording retention (telephony spec section 4) on the file store: a workspace's
// `recording_retention_days` deletes its recordings N days after their call by the hourly schedule's
// pass (real PostgreSQL, a real directory), 0 deletes a call's recording as the call ends (before
// call.completed says has_recording), unset keeps them. The pass runs as its workflow on the
// time-skipping server; the schedule is made on the Temporal dev server.

let stack: TimeSkippingCallStack;
let dir: string;
const DAY = 24 * 60 * 60 * 1000;

before(async () => {
  stack = await startTimeSkippingCallStack({ prefix: 'retention', logLevel: 'ERROR' });
  dir = await mkdtemp(path.join(tmpdir(), 'recordings-'));
  stack.settings.recordingsDir = dir;
});
after(async () => {
  await stack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const em = () => stack.db.orm.em.fork();
const recorded = async () => (await readdir(dir)).filter((name) => name.endsWith('.wav')).sort();
const record = (callId: string) => writeFile(path.join(dir, `${callId}.wav`), Buffer.alloc(44));

async function workspaceWith(days: number | null) {
  const fixture = await createAgentFixture(stack.db.orm);
  await em().nativeUpdate(Workspace, { id: fixture.workspaceId }, { recordingRetentionDays: days });
  return fixture;
}

/** A recorded call of `fixture` in `status`, ended `endedDaysAgo` days ago (null: not ended). */
async function recordedCall(fixture: AgentFixture, status: Call['status'], endedDaysAgo: number | null) {
  const call = await createQueuedCall(stack.db.orm, fixture, { to: '+4790011111' });
  const endedAt = endedDaysAgo === null ? null : new Date(Date.now() - endedDaysAgo * DAY);
  await em().nativeUpdate(Call, { id: call.id }, { status, endedAt });
  await record(call.id);
  return call.id;
}

test('a pass deletes the recordings of final calls older than their workspace’s retention, and nothing else', async () => {
  const week = await workspaceWith(7);
  const none = await workspaceWith(0);
  const kept = await workspaceWith(null);
  const old = await recordedCall(week, 'completed', 8);
  const oldFailed = await recordedCall(week, 'no_answer', 10);
  const young = await recordedCall(week, 'completed', 6);
  const live = await recordedCall(week, 'in_progress', null);
  const zero = await recordedCall(none, 'completed', 0);
  const forever = await recordedCall(kept, 'completed', 400);
  const stranger = '00000000-0000-4000-8000-00000000abcd';
  await record(stranger);
  await writeFile(path.join(dir, 'notes.txt'), 'not a recording');

  const sweep = await expireRecordings(em(), new FileRecordingStore(dir), new Date());
  assert.deepEqual(sweep, { checked: 7, deleted: 3 });
  assert.deepEqual(await recorded(), [young, live, forever, stranger].map((id) => `${id}.wav`).sort());
  for (const gone of [old, oldFailed, zero]) assert.ok(!(await recorded()).includes(`${gone}.wav`));
  // A second pass finds nothing more; a directory not made yet is no error.
  assert.deepEqual(await expireRecordings(em(), new FileRecordingStore(dir), new Date()), {
    checked: 4,
    deleted: 0,
  });
  assert.deepEqual(
    await expireRecordings(em(), new FileRecordingStore(path.join(dir, 'missing')), new Date()),
    {
      checked: 0,
      deleted: 0,
    },
  );
});

test('the pass is a workflow on the calls queue (the schedule’s action)', async () => {
  const week = await workspaceWith(1);
  const old = await recordedCall(week, 'completed', 2);
  await stack.withEnvironment(async (env) => {
    const workflowId = `retention-${old}`;
    const result = await runWorkers(await stack.workers(env), () =>
      env.client.workflow.execute<RecordingRetentionWorkflow>(RECORDING_RETENTION_WORKFLOW, {
        workflowId,
        taskQueue: `${stack.settings.taskQueuePrefix}calls`,
        args: [],
      }),
    );
    assert.ok(result.deleted >= 1);
    // Replayed by test/workflow-histories.test.ts.
    keepHistory('recording-retention', await env.client.workflow.getHandle(workflowId).fetchHistory());
  });
  assert.ok(!(await recorded()).includes(`${old}.wav`));
});

test('retention 0: the recording goes as the call ends, and call.completed says has_recording false; unset keeps it', async () => {
  const calls: { call: Call; kept: boolean }[] = [];
  for (const days of [0, null]) {
    const call = await createQueuedCall(stack.db.orm, await workspaceWith(days), { to: '+4790015678' });
    // As a media gateway would have written it during the call.
    await record(call.id);
    calls.push({ call, kept: days === null });
  }
  await stack.withEnvironment(async (env) => {
    await runWorkers(await stack.workers(env), async () => {
      for (const { call } of calls) await startCallWorkflow(env.client, stack.settings, call);
      for (const { call } of calls) await env.client.workflow.getHandle(callWorkflowId(call.id)).result();
    });
  });
  for (const { call, kept } of calls) {
    assert.equal((await recorded()).includes(`${call.id}.wav`), kept);
    const { events } = await storedCall(stack.db.orm, call.id);
    const completed = events.find((event) => event.type === 'call.completed');
    assert.equal(completed?.body.data.object.has_recording, kept);
  }
});

test('the schedule: every hour, one pass on the calls queue, an overlapping pass skipped; made once', async () => {
  const server = await sharedDevServer();
  const client = new Client({
    connection: await Connection.connect({ address: server.address }),
    namespace: server.namespace,
  });
  const settings = { taskQueuePrefix: `retention-${Date.now()}-` };
  try {
    assert.equal(await ensureRecordingRetentionSchedule(client, settings), 'created');
    assert.equal(await ensureRecordingRetentionSchedule(client, settings), 'exists');
    const schedule = await client.schedule
      .getHandle(recordingRetentionScheduleId(settings.taskQueuePrefix))
      .describe();
    assert.deepEqual(
      (schedule.spec.intervals ?? []).map((interval) => interval.every),
      [60 * 60 * 1000],
    );
    assert.equal(schedule.action.type, 'startWorkflow');
    assert.equal(
      schedule.action.type === 'startWorkflow' && schedule.action.workflowType,
      RECORDING_RETENTION_WORKFLOW,
    );
    assert.equal(
      schedule.action.type === 'startWorkflow' && schedule.action.taskQueue,
      `${settings.taskQueuePrefix}calls`,
    );
    assert.equal(schedule.policies.overlap, ScheduleOverlapPolicy.SKIP);
  } finally {
    await client.schedule
      .getHandle(recordingRetentionScheduleId(settings.taskQueuePrefix))
      .delete()
      .catch(() => {});
    await client.connection.close();
    await server.close();
  }
});
