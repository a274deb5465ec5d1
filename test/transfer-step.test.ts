import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createCallActivities } from '../activities/calls.js';
import { TranscriptAnalyzer } from '../lib/analysis/transcript-analyzer.js';
import type { Carrier } from '../lib/carrier/carrier.js';
import { FileRecordingStore } from '../lib/recordings/recording-files.js';
import { ScriptedAgent } from '../lib/voice-runtime/scripted-agent.js';
import { createAgentFixture, createQueuedCall, storedCall } from './support/call-fixtures.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

// The call's transfer step (activities/calls.ts `transferCall`) run as Temporal runs an activity
// (MockActivityEnvironment), against PostgreSQL: what a retried step writes of the transfer.

let db: TestDatabase;
before(async () => {
  db = await freshDatabase();
});
after(async () => {
  await db?.close();
});

test('a retried transfer step keeps the transfer’s start; the carrier is asked again, the record says connected once', async () => {
  const fixture = await createAgentFixture(db.orm, {});
  const call = await createQueuedCall(db.orm, fixture, { to: '+4790001234' });
  let transfers = 0;
  let carrierFails = true;
  const carrier = {
    transfer: async () => {
      transfers++;
      if (carrierFails) throw new Error('the carrier did not answer');
    },
  } as unknown as Carrier;
  const { transferCall } = createCallActivities({
    orm: db.orm,
    carrier,
    voiceRuntime: new ScriptedAgent(),
    analyzer: new TranscriptAnalyzer(),
    planAnswerer: null,
    recordings: new FileRecordingStore('/nonexistent'),
    dialingCountries: ['NO'],
  });
  const env = new MockActivityEnvironment();
  await assert.rejects(env.run(transferCall, { callId: call.id, to: '+4722998877' }), /did not answer/);
  const first = (await storedCall(db.orm, call.id)).call.transfer;
  assert.equal(first?.status, 'connecting');
  await new Promise((resolve) => setTimeout(resolve, 20));
  carrierFails = false;
  assert.deepEqual(await env.run(transferCall, { callId: call.id, to: '+4722998877' }), {
    transferred: true,
  });
  const done = (await storedCall(db.orm, call.id)).call.transfer;
  assert.equal(transfers, 2);
  assert.equal(done?.status, 'connected');
  assert.equal(done?.started_at, first?.started_at, 'the retry kept the first attempt’s start');
  assert.ok(done?.connected_at && done.connected_at >= done.started_at);
});
