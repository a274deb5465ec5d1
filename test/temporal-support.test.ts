import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { SEARCH_ATTRIBUTES } from '../lib/temporal/search-attributes.js';
import { installQuietRuntime } from './support/quiet-logger.js';
import { createTimeSkippingEnvironment, type SharedDevServer, sharedDevServer } from './support/temporal.js';
import { longSleepWorkflow, taggedWorkflow } from './support/test-workflows.js';
import { bundleWorkflows } from './support/workflow-bundles.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD

installQuietRuntime('ERROR');

let bundle: WorkflowBundle;
before(async () => {
  bundle = await bundleWorkflows(fileURLToPath(new URL('./support/test-workflows.ts', import.meta.url)));
});

test('the time-skipping environment runs a 30-day sleep without waiting for it', async () => {
  const env: TestWorkflowEnvironment = await createTimeSkippingEnvironment();
  try {
    const taskQueue = `time-skipping-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: bundle,
    });
    const wallStart = Date.now();
    const workflowTime = await worker.runUntil(
      env.client.workflow.execute(longSleepWorkflow, { args: [30], taskQueue, workflowId: randomUUID() }),
    );
    assert.ok(workflowTime >= 30 * DAY_MS, `workflow time passed: ${workflowTime} ms`);
    assert.ok(Date.now() - wallStart < 60_000, 'the sleep took wall-clock time');
  } finally {
    await env.teardown();
  }
});

let devServer: SharedDevServer;
after(async () => {
  await devServer?.close();
});

test('the shared dev server runs workflows and has the search attributes registered', async () => {
  devServer = await sharedDevServer();
  const connection = await Connection.connect({ address: devServer.address });
  const nativeConnection = await NativeConnection.connect({ address: devServer.address });
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({
      namespace: devServer.namespace,
    });
    for (const name of Object.keys(SEARCH_ATTRIBUTES)) {
      assert.equal(customAttributes?.[name], KEYWORD, `search attribute ${name}`);
    }

    const client = new Client({ connection, namespace: devServer.namespace });
    const taskQueue = `dev-server-${randomUUID()}`;
    const worker = await Worker.create({
      connection: nativeConnection,
      namespace: devServer.namespace,
      taskQueue,
      workflowBundle: bundle,
    });
    const workspaceId = randomUUID();
    const workflowId = `tagged-${workspaceId}`;
    await worker.runUntil(
      client.workflow.execute(taggedWorkflow, { args: [workspaceId], taskQueue, workflowId }),
    );

    // Visibility is eventually consistent; the dev server catches up within moments.
    let found: string[] = [];
    for (let i = 0; i < 50 && found.length === 0; i++) {
      found = [];
      for await (const wf of client.workflow.list({ query: `WorkspaceId = "${workspaceId}"` })) {
        found.push(wf.workflowId);
      }
      if (found.length === 0) await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual(found, [workflowId]);
  } finally {
    await nativeConnection.close();
    await connection.close();
  }
});
