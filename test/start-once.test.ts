import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { startOnce } from '../lib/temporal/start-once.js';

// lib/temporal/start-once.ts: the one place that says a workflow already started counts as
// started. The client's error class is the one startOnce knows (the client re-exports common's).

test('a start that succeeds, or finds the workflow started, counts as started', async () => {
  await startOnce(Promise.resolve({ workflowId: 'call-1' }));
  const started = new WorkflowExecutionAlreadyStartedError('already started', 'call-1', 'callWorkflow');
  await startOnce(Promise.reject(started));
});

test('any other failure of the start is the caller’s', async () => {
  const unreachable = new Error('no answer within 10000 ms');
  await assert.rejects(startOnce(Promise.reject(unreachable)), (error) => error === unreachable);
});
