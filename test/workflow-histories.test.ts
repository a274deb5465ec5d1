import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from '@temporalio/worker';
import * as workflows from '../workflows/index.js';
import { keptHistories } from './support/kept-histories.js';
import { installQuietRuntime } from './support/quiet-logger.js';
import { bundleWorkflows } from './support/workflow-bundles.js';

// Every committed history (test/fixtures/workflow-histories/, recorded once from a real run by
// the test of its workflow) replays with the current workflow code: a change that a running
// workflow could not follow fails here. Each workflow, and each path named below, has one.

/** The paths that must each have a committed history (file name without `.json`). */
const PATHS = [
  // Outbound calls on the scripted agent and their simulated far ends (test/call-workflow.test.ts).
  ...['1001', '1002', '1003', '1004', '2002', '2003', '2004', '5678', '5556-caller-first'].flatMap((to) => [
    `outbound-${to}-call`,
    `outbound-${to}-far-end`,
  ]),
  // An answering machine taking a message, and a phone menu the agent presses a key in
  // (test/answering-machine-workflow.test.ts).
  ...['3001-leave-message', '3002-keypad'].flatMap((to) => [`outbound-${to}-call`, `outbound-${to}-far-end`]),
  // The same message before `voicemail-recorded`: left by a local activity (kept while such calls may run).
  'outbound-3001-leave-message-in-task-call',
  'outbound-3001-leave-message-in-task-far-end',
  // A warm transfer: the call, its far end and the consultation leg (test/warm-transfer-workflow.test.ts).
  'warm-transfer-call',
  'warm-transfer-far-end',
  'warm-transfer-consultation-leg',
  // Calls that come in (test/inbound-call-workflow.test.ts).
  'inbound-phone-call',
  'inbound-phone-far-end',
  'inbound-web-call',
  'inbound-web-far-end',
  // A dashboard test-panel call and its browser far end (test/browser-caller-workflow.test.ts).
  'test-panel-call',
  'test-panel-browser-caller',
  // The language-model agent: end_call, transfer_call, agent_error (test/call-workflow-llm.test.ts).
  'llm-end-call-call',
  'llm-transfer-call-call',
  'llm-agent-error-call',
  // The same before `agent-turns-in-task`: the agent's steps as activities (kept while such calls may run).
  'llm-end-call-activities-call',
  'llm-transfer-call-activities-call',
  'llm-agent-error-activities-call',
  // Calls with audio (test/call-workflow-media.test.ts): the turns in the workflow (a barge-in),
  // and the turns taken by the media gateway (`turns-in-gateway`).
  'inbound-media-barge-in-call',
  'inbound-media-gateway-turns-call',
  'inbound-media-reported-transfer-call',
  'inbound-media-bridged-transfer-call',
  'outbound-media-machine-call',
  // The gateway dying mid-turn: the turn cut short (`live-steps-end-with-media`).
  'inbound-media-lost-mid-turn-call',
  // A campaign and one of its calls; a campaign across continue-as-new (test/campaign-workflow.test.ts).
  'campaign',
  'campaign-call',
  'campaign-first-run',
  'campaign-last-run',
  // Webhooks: a fan-out, a delivery retried on its schedule, a recovery across continue-as-new
  // (test/webhook-delivery.test.ts).
  'event-fan-out',
  'webhook-delivery',
  'webhook-recovery-first-run',
  'webhook-recovery-last-run',
];

test('every workflow and every path named has a committed history', () => {
  const kept = keptHistories();
  const names = new Set(kept.map((history) => history.name));
  for (const name of PATHS) assert.ok(names.has(name), `no committed history ${name}.json`);
  const types = new Set(
    kept.map(
      ({ history }) => history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name,
    ),
  );
  for (const workflow of Object.keys(workflows)) assert.ok(types.has(workflow), `no history of ${workflow}`);
});

test('every committed history replays with the current workflow code', { timeout: 120_000 }, async () => {
  installQuietRuntime();
  const kept = keptHistories();
  let replayed = 0;
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: await bundleWorkflows(), replayName: 'committed-histories' },
    kept,
  )) {
    assert.equal(result.error, undefined, `${result.workflowId}: ${result.error}`);
    replayed++;
  }
  assert.equal(replayed, kept.length);
});
