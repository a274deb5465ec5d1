import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent } from '../../db/entities/index.js';
import { loadCall } from '../calls/call-status-changes.js';
import type { ToolCallInput, ToolCallResult } from '../temporal/tool-calls.js';
import { TOOL_UNAVAILABLE } from '../temporal/tool-calls.js';
import { checkToolArguments } from './tool-arguments.js';
import { type ToolCallRow, writeToolCall } from './tool-call-rows.js';
import { sendToolRequest } from './tool-request.js';

// One attempt of the tool step (activities/tool-calls.ts): the arguments checked first, then the
// signed request; a final answer is written to the call's tool calls and handed back for the
// model, a passing failure is retried by Temporal with the same id (ToolRetryLater), and the last
// attempt's passing failure ends it `failed`.

export interface ToolStepDeps {
  em: EntityManager;
  /** WEBHOOKS_ALLOW_PRIVATE_TARGETS: tool URLs follow the webhook URL rules. */
  allowPrivate: boolean;
}

export interface ToolAttempt {
  /** 1-based, counting across restarts of the worker (Temporal's attempt). */
  number: number;
  last: boolean;
  /** When the first attempt began (epoch ms): the row's duration runs from there. */
  firstAttemptAt: number;
}

/** A passing failure worth another attempt, after `retryAfterMs` when the tool asked for a wait. */
export class ToolRetryLater extends Error {
  override name = 'ToolRetryLater';
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export async function runToolCallAttempt(
  deps: ToolStepDeps,
  input: ToolCallInput,
  attempt: ToolAttempt,
): Promise<ToolCallResult> {
  const { em } = deps;
  const call = await loadCall(em, input.callId);
  const tool = (call.agentSnapshot.tools ?? []).find((candidate) => candidate.name === input.name);
  const finish = async (result: ToolCallResult, args: Record<string, unknown>) => {
    const row: ToolCallRow = {
      id: input.toolCallId,
      callId: input.callId,
      name: input.name,
      arguments: args,
      afterLineIndex: input.afterLineIndex,
      createdAt: input.decidedAt,
      ...result,
    };
    await writeToolCall(em, row);
    return result;
  };
  // Arguments that do not fit send nothing: the model is told why and may try again.
  const invalid = (args: Record<string, unknown>, details: string) =>
    finish(
      {
        status: 'invalid_arguments',
        result: JSON.stringify({ error: 'invalid_arguments', details }),
        attempts: 0,
        responseStatus: null,
        durationMs: null,
      },
      args,
    );
  if (!tool) return invalid({}, `this agent has no tool named ${input.name}`);
  const checked = checkToolArguments(input.arguments, tool.parameters);
  if (!checked.ok) return invalid(checked.arguments, checked.details);
  // The secret as it is now: a rotated secret stops signing at once. It is never in the history.
  const agent = call.agent ? await em.findOne(Agent, { id: call.agent }, { fields: ['toolsSecret'] }) : null;
  const outcome = await sendToolRequest({
    url: tool.url,
    toolCallId: input.toolCallId,
    callId: input.callId,
    agentId: call.agent ?? null,
    name: input.name,
    arguments: checked.arguments,
    metadata: call.metadata ?? {},
    attempt: attempt.number,
    secret: agent?.toolsSecret ?? null,
    timeoutMs: tool.timeoutSeconds * 1000,
    allowPrivate: deps.allowPrivate,
  });
  const durationMs = Date.now() - attempt.firstAttemptAt;
  if (outcome.final) {
    const { status, responseStatus, result } = outcome;
    return finish(
      { status, result, attempts: attempt.number, responseStatus, durationMs },
      checked.arguments,
    );
  }
  if (!attempt.last) throw new ToolRetryLater(outcome.error, outcome.retryAfterMs);
  return finish(
    {
      status: 'failed',
      result: TOOL_UNAVAILABLE,
      attempts: attempt.number,
      responseStatus: outcome.responseStatus,
      durationMs,
    },
    checked.arguments,
  );
}
