import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import type { Call } from '../db/entities/index.js';
import { STALE_QUEUED_SECONDS } from '../lib/calls/call-limits.js';
import { expireStaleQueuedCalls, SWEEP_PAGE_SIZE } from '../lib/calls/expire-queued-calls.js';
import { startCallWorkflow } from '../lib/calls/start-call-workflow.js';
import { createLogger } from '../lib/logger.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { type AgentFixture, createAgentFixture, createQueuedCall } from './support/call-fixtures.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { type SharedDevServer, sharedDevServer } from './support/temporal.js';

// The queued-call sweep with a backlog: more stale queued calls whose workflow exists than one
// page holds (their workflows wait on a task queue no worker polls), and a newer call whose
// workflow never started. The sweep pages past the first ones and ends the orphan.

let db: TestDatabase;
let server: SharedDevServer;
let client: Client;
let fixture: AgentFixture;
const settings = { taskQueuePrefix: `sweep-${Date.now().toString(36)}-` };
const logger = createLogger('error', { write: () => {} });

before(async () => {
  [db, server] = await Promise.all([freshDatabase(), sharedDevServer()]);
  client = new Client({
    connection: await Connection.connect({ address: server.address }),
    namespace: server.namespace,
  });
  fixture = await createAgentFixture(db.orm, { name: 'Sweep' });
});
after(async () => {
  await client?.connection.close();
  await server?.close();
  await db?.close();
});

test('a page of queued calls whose workflow exists does not hide a newer orphan from the sweep', async () => {
  const started: Call[] = [];
  for (let i = 0; i < SWEEP_PAGE_SIZE; i++) {
    const call = await createQueuedCall(db.orm, fixture, { to: '+4791234567' });
    await startCallWorkflow(client, settings, call);
    started.push(call);
  }
  const orphan = await createQueuedCall(db.orm, fixture, { to: '+4791234568' });
  try {
    const later = new Date(Date.now() + (STALE_QUEUED_SECONDS + 1) * 1000);
    const expired = await expireStaleQueuedCalls(db.orm.em.fork(), client, settings, logger, later);
    assert.deepEqual(expired, [orphan.id], 'only the call without a workflow');
    const description = await client.workflow.getHandle(callWorkflowId(orphan.id)).describe();
    assert.equal(description.status.name, 'RUNNING', 'its expiring workflow was started');
  } finally {
    for (const call of [...started, orphan]) {
      await client.workflow
        .getHandle(callWorkflowId(call.id))
        .terminate('test over')
        .catch(() => {});
    }
  }
});
