import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';

/**
 * Awaits a workflow's start; a workflow already started under that id counts as started. Every
 * workflow id the service starts is its work's own (`call-<callId>`, `event-fanout-<eventId>`, …),
 * so a start repeated after a retry or a lost answer finds the first one and starts nothing new.
 */
export async function startOnce(start: Promise<unknown>): Promise<void> {
  try {
    await start;
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
