import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Orm } from '../db/orm.js';
import { runToolCallAttempt, ToolRetryLater } from '../lib/agent-tools/tool-call-step.js';
import { CallMissingError } from '../lib/calls/call-status-changes.js';
import type { Logger } from '../lib/logger.js';
import { toolCallDuration, toolCalls } from '../lib/metrics/service-metrics.js';
import { TOOL_CALL_ATTEMPTS, type ToolCallInput, type ToolCallResult } from '../lib/temporal/tool-calls.js';
import { HEARTBEAT_EVERY_MS } from './heartbeat.js';

// The tool step: every activity type on the tools queue is one of the agents' tools, by name
// (lib/temporal/tool-calls.ts), so the worker takes them all with its default activity.

export interface ToolCallActivityDeps {
  orm: Orm;
  allowPrivate: boolean;
  logger?: Logger;
}

/** Failure type of a passing tool failure, as the history shows it; retried with the same id. */
export const TOOL_UNAVAILABLE_FAILURE = 'ToolUnavailable';

export function createToolCallActivities(deps: ToolCallActivityDeps) {
  return {
    async default(input: ToolCallInput): Promise<ToolCallResult> {
      const context = Context.current();
      const { info } = context;
      // Heartbeats as every step does (activities/heartbeat.ts), with details: the first attempt's
      // start travels in them to the next attempts, so the row's duration counts from the first
      // request even across a worker's restart.
      const before = info.heartbeatDetails as { firstAttemptAt?: number } | undefined;
      const firstAttemptAt = before?.firstAttemptAt ?? Date.now();
      context.heartbeat({ firstAttemptAt });
      const timer = setInterval(() => context.heartbeat({ firstAttemptAt }), HEARTBEAT_EVERY_MS);
      try {
        const result = await runToolCallAttempt(
          { em: deps.orm.em.fork() as EntityManager, allowPrivate: deps.allowPrivate },
          { ...input, name: info.activityType },
          { number: info.attempt, last: info.attempt >= TOOL_CALL_ATTEMPTS, firstAttemptAt },
        );
        toolCalls.inc({ status: result.status });
        if (result.durationMs !== null) toolCallDuration.observe(result.durationMs / 1000);
        deps.logger?.info('tool call', {
          callId: input.callId,
          toolCallId: input.toolCallId,
          tool: info.activityType,
          status: result.status,
          attempts: result.attempts,
          responseStatus: result.responseStatus,
          durationMs: result.durationMs,
        });
        return result;
      } catch (error) {
        if (error instanceof ToolRetryLater) {
          deps.logger?.warn('tool call attempt failed', {
            callId: input.callId,
            toolCallId: input.toolCallId,
            tool: info.activityType,
            attempt: info.attempt,
            error: error.message,
          });
          throw ApplicationFailure.create({
            message: error.message,
            type: TOOL_UNAVAILABLE_FAILURE,
            ...(error.retryAfterMs !== undefined ? { nextRetryDelay: error.retryAfterMs } : {}),
          });
        }
        if (error instanceof CallMissingError)
          throw ApplicationFailure.nonRetryable(error.message, 'CallNotFound');
        throw error;
      } finally {
        clearInterval(timer);
      }
    },
  };
}
