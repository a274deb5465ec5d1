import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { Call } from '../db/entities/index.js';
import { setLimits } from '../lib/accounts.js';
import { freePort } from '../scripts/processes.js';
import { adminInProcess, adminProcess } from './support/admin-cli.js';
import { type AgentFixture, createAgentFixture, storedCall } from './support/call-fixtures.js';
import { type CallStack, startCallStack } from './support/call-stack.js';
import type { TestDatabase } from './support/database.js';
import type { Run } from './support/run-process.js';

// `simulate inbound` and `simulate web-call` (operations contract, section 5) on a fresh database
// and the shared Temporal dev server, with the call workers running in this test process on the
// task queues the CLI is pointed at. The first case runs the CLI as operators do, a subprocess;
// the others call its entry point in this process (test/support/admin-cli.ts).
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let stack: CallStack;
let db: TestDatabase;
let client: Client;
let ada: AgentFixture;

before(async () => {
  stack = await startCallStack({ prefix: 'inbound-cli', simTimeScale: 0.01 });
  ({ db, client } = stack);
  ada = await createAgentFixture(db.orm, {
    name: 'Ada',
    firstMessage: 'Acme, Ada speaking. How can I help?',
  });
});

after(async () => {
  await stack?.close();
});

function cliEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: stack.settings.temporalAddress,
    TEMPORAL_NAMESPACE: stack.settings.temporalNamespace,
    TASK_QUEUE_PREFIX: stack.settings.taskQueuePrefix,
    LOG_LEVEL: 'info',
    ...env,
  };
}

function admin(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return adminInProcess(args, cliEnv(env));
}

/** Runs with --json: exit 0 and exactly one JSON object on one line of stdout. */
async function adminJson(
  args: string[],
  env?: NodeJS.ProcessEnv,
  run: typeof admin = admin,
): Promise<Record<string, unknown>> {
  const result = await run([...args, '--json'], env);
  assert.equal(result.code, 0, `exit code 0 for ${args.join(' ')}; stderr: ${result.stderr}`);
  assert.equal(result.stdout.trimEnd().split('\n').length, 1, `one line on stdout: ${result.stdout}`);
  assert.ok(result.stdout.endsWith('\n'));
  return JSON.parse(result.stdout);
}

/** A refusal: exit 1, nothing on stdout, one line on stderr. */
function assertRefused(result: Run, message: RegExp) {
  assert.equal(result.code, 1, `exit code; stderr: ${result.stderr}`);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^error: [^\n]+\n$/, 'exactly one line on stderr');
  assert.match(result.stderr, message);
}

async function waitForEnd(callId: string) {
  for (let i = 0; i < 300; i++) {
    // The last event is written just after the status: wait for both.
    const stored = await storedCall(db.orm, callId);
    const last = stored.events.at(-1)?.type;
    if (
      ['completed', 'failed'].includes(stored.call.status) &&
      ['call.completed', 'call.failed'].includes(last ?? '')
    )
      return stored;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`call ${callId} did not end`);
}

async function callsOf(workspaceId: string) {
  return db.orm.em.fork().find(Call, { workspace: workspaceId });
}

describe('simulate inbound', { timeout: 180_000 }, () => {
  test('answered: prints the call id at once; the call runs on like an outbound one', async () => {
    const asProcess = (args: string[], env?: NodeJS.ProcessEnv) => adminProcess(args, { env: cliEnv(env) });
    const out = await adminJson(
      ['simulate', 'inbound', '--number', ada.number, '--from', '+4793335678'],
      {},
      asProcess,
    );
    assert.deepEqual(Object.keys(out).sort(), ['answered', 'call_id', 'reason']);
    assert.equal(out.answered, true);
    assert.equal(out.reason, null);
    assert.match(String(out.call_id), uuid);

    const { call, transcript, events } = await waitForEnd(String(out.call_id));
    assert.equal(call.status, 'completed');
    assert.equal(call.direction, 'inbound');
    assert.equal(call.channel, 'phone');
    assert.equal(call.agent, ada.agentId);
    assert.equal(call.fromNumber, '+4793335678');
    assert.equal(call.toNumber, ada.number);
    assert.equal(call.analysis?.outcome, 'resolved');
    assert.deepEqual(transcript[0], { role: 'agent', index: 0, text: 'Acme, Ada speaking. How can I help?' });
    assert.ok(transcript.length >= 4);
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
  });

  test('returns as soon as the call is taken, without waiting for it (no worker on these queues)', async () => {
    const idle = `inbound-cli-idle-${randomBytes(4).toString('hex')}-`;
    const out = await adminJson(['simulate', 'inbound', '--number', ada.number, '--from', '+4793332003'], {
      TASK_QUEUE_PREFIX: idle,
    });
    assert.equal(out.answered, true);
    const { call } = await storedCall(db.orm, String(out.call_id));
    assert.equal(call.status, 'ringing', 'taken, waiting for its workflow to pick it up');
    await client.workflow.getHandle(`call-${out.call_id}`).terminate('test: nobody runs this queue');
  });

  test('the caller number picks the scenario: 2002 is transferred', async () => {
    const out = await adminJson(['simulate', 'inbound', '--number', ada.number, '--from', '+4793332002']);
    const { call, events } = await waitForEnd(String(out.call_id));
    assert.equal(call.endReason, 'transferred');
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.transferred', 'call.completed'],
    );
  });

  test('not answered: call_id null with the reason, and no Call recorded', async () => {
    const unassigned = await createAgentFixture(db.orm);
    const em = db.orm.em.fork();
    await em
      .getConnection()
      .execute('update phone_numbers set agent_id = null where number = ?', [unassigned.number]);
    const draft = await createAgentFixture(db.orm, { status: 'draft' });
    const unpublished = await createAgentFixture(db.orm, { status: 'unpublished' });
    const cases: [string, string][] = [
      [unassigned.number, 'no_agent'],
      [draft.number, 'agent_not_published'],
      [unpublished.number, 'agent_not_published'],
      ['+4759999999', 'unknown_number'],
    ];
    for (const [number, reason] of cases) {
      const out = await adminJson(['simulate', 'inbound', '--number', number, '--from', '+4793335678']);
      assert.deepEqual(out, { call_id: null, answered: false, reason });
    }
    for (const fixture of [unassigned, draft, unpublished])
      assert.equal((await callsOf(fixture.workspaceId)).length, 0);
  });

  test('text output without --json', async () => {
    const result = await admin(['simulate', 'inbound', '--number', '+4759999998', '--from', '+4793335678']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Not answered \(unknown_number\)/);
  });

  test('numbers that are not E.164 and missing flags are refused', async () => {
    assertRefused(
      await admin(['simulate', 'inbound', '--number', '12345', '--from', '+4793335678', '--json']),
      /--number "12345" is not an E\.164 number/,
    );
    assertRefused(
      await admin(['simulate', 'inbound', '--number', ada.number, '--from', 'anonymous', '--json']),
      /--from "anonymous" is not an E\.164 number/,
    );
    const missing = await admin(['simulate', 'inbound', '--number', ada.number, '--json']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--from/);
  });

  test('Temporal unreachable: a one-line error and nothing recorded', async () => {
    const fixture = await createAgentFixture(db.orm);
    const port = await freePort();
    assertRefused(
      await admin(['simulate', 'inbound', '--number', fixture.number, '--from', '+4793335678', '--json'], {
        TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      }),
      new RegExp(`Temporal is not reachable at 127\\.0\\.0\\.1:${port}.*TEMPORAL_ADDRESS`),
    );
    assertRefused(
      await admin(['simulate', 'web-call', '--agent', fixture.agentId, '--json'], {
        TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      }),
      /Temporal is not reachable/,
    );
    assert.equal((await callsOf(fixture.workspaceId)).length, 0);
  });
});

describe('simulate web-call', { timeout: 180_000 }, () => {
  test('a draft agent: prints the call id; a web call with transcript, analysis and events', async () => {
    const draft = await createAgentFixture(db.orm, {
      status: 'draft',
      numbers: 0,
      firstMessage: 'Hi, test panel!',
    });
    const out = await adminJson([
      'simulate',
      'web-call',
      '--agent',
      draft.agentId,
      '--from-label',
      'Ada in the dashboard',
    ]);
    assert.deepEqual(Object.keys(out), ['call_id']);
    assert.match(String(out.call_id), uuid);
    const { call, transcript, events } = await waitForEnd(String(out.call_id));
    assert.equal(call.status, 'completed');
    assert.equal(call.direction, 'inbound');
    assert.equal(call.channel, 'web');
    assert.equal(call.agent, draft.agentId);
    assert.equal(call.fromNumber, null);
    assert.deepEqual(call.metadata, { from_label: 'Ada in the dashboard' });
    assert.equal(transcript[0].text, 'Hi, test panel!');
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
  });

  test('a published agent without a label', async () => {
    const out = await adminJson(['simulate', 'web-call', '--agent', ada.agentId]);
    const { call } = await waitForEnd(String(out.call_id));
    assert.equal(call.channel, 'web');
    assert.deepEqual(call.metadata, {});
    assert.equal(call.status, 'completed');
  });

  test('an unpublished or missing agent is a one-line error with a non-zero exit', async () => {
    const unpublished = await createAgentFixture(db.orm, { status: 'unpublished', numbers: 0 });
    assertRefused(
      await admin(['simulate', 'web-call', '--agent', unpublished.agentId, '--json']),
      /is unpublished; web calls need a draft or published agent/,
    );
    const missing = crypto.randomUUID();
    assertRefused(
      await admin(['simulate', 'web-call', '--agent', missing, '--json']),
      new RegExp(`no agent with id ${missing}`),
    );
    assert.equal((await callsOf(unpublished.workspaceId)).length, 0);
  });

  test('a workspace whose minutes are used up: a one-line refusal naming the reason, and no Call', async () => {
    const spent = await createAgentFixture(db.orm);
    await setLimits(db.orm.em.fork(), { workspaceId: spent.workspaceId, minutesQuota: 0 });
    assertRefused(
      await admin(['simulate', 'web-call', '--agent', spent.agentId, '--json']),
      /web call refused \(quota_exceeded\): the agent's workspace is at its call limits; no call was recorded/,
    );
    assert.equal((await callsOf(spent.workspaceId)).length, 0);
  });
});
