import { CancellationScope, condition, uuid4, workflowInfo } from '@temporalio/workflow';
import {
  INVALID_ARGUMENT_RETRIES_PER_TURN,
  MAX_TOOL_CALLS_PER_CALL,
  MAX_TOOL_CALLS_PER_TURN,
  type RequestedToolCall,
  TOOL_CALL_ATTEMPTS,
  TOOL_LIMIT,
  TOOL_UNAVAILABLE,
  type ToolCallInput,
  type ToolCallResult,
  type ToolExchange,
  toolCallId,
  toolCallsAllowed,
} from '../../lib/temporal/tool-calls.js';
import { live, records, toolStep } from './activity-proxies.js';
import type { CallState } from './call-state.js';
import { failedForGood, now } from './steps.js';

// The agent's own tools in a turn (agent-tools spec section 3). The model's decision is in the
// history before anything is sent: the turn's local activity result holds the calls it made, and
// each call's id is made here from the workflow's seeded random, so a replay, a crash or a retry
// sends the same id again and never a call the model did not make. Each call is an activity of
// its own on the tools queue, named for the tool; the call stays live meanwhile, and a hang-up
// drops what is still running (the request is not cancelled mid-flight).

/** One turn's tool calls so far: what the model was given, and the turn's limits. */
export class TurnTools {
  readonly exchanges: ToolExchange[] = [];
  made = 0;
  invalid = 0;
}

/** The agent's own tools are offered again while the turn's and the call's limits allow. */
export function offersTools(call: CallState, tools: TurnTools): boolean {
  return (
    tools.made < MAX_TOOL_CALLS_PER_TURN &&
    call.toolCallCount < MAX_TOOL_CALLS_PER_CALL &&
    tools.invalid <= INVALID_ARGUMENT_RETRIES_PER_TURN
  );
}

/** The tools queue: the input's, or (a call started before tools) the one beside the calls queue. */
function toolsTaskQueue(call: CallState): string {
  return call.input.toolsTaskQueue ?? workflowInfo().taskQueue.replace(/calls$/, 'tools');
}

/**
 * Runs the tool calls of one answer of the model, at once, and keeps what each gave for the next
 * request. Unless the model's own words came with them, the first tool's `speak_while_waiting` is
 * said meanwhile. False: the person hung up while tools ran (the call then ends as a hang-up).
 */
export async function runToolCalls(
  call: CallState,
  requested: RequestedToolCall[],
  spokeWithThem: boolean,
  tools: TurnTools,
): Promise<boolean> {
  const { callId } = call;
  const decidedAt = now();
  const ids = requested.map(() => toolCallId(uuid4()));
  // A call beyond the turn's or the call's limit is not sent: the model is told tool_limit.
  const allowed = toolCallsAllowed(requested.length, tools.made, call.toolCallCount);
  const running: Promise<unknown>[] = [];

  let afterLineIndex = call.nextIndex - 1;
  const filler = spokeWithThem
    ? null
    : (requested.find((request, i) => allowed[i] && request.speakWhileWaiting)?.speakWhileWaiting ?? null);
  if (filler) {
    const line = {
      index: call.nextIndex,
      role: 'agent' as const,
      text: filler,
      offsetSeconds: call.spokenSoFar(),
    };
    call.nextIndex += 1;
    call.lastAgentLine = line;
    call.progress.transcriptLines = call.nextIndex;
    afterLineIndex = line.index;
    // Best effort: a line that cannot be said does not stop the tool.
    running.push(
      live.sayLine({ callId, line }).catch((error) => {
        if (!failedForGood(error)) throw error;
      }),
    );
  }

  const inputs = requested.map((request, i): ToolCallInput | null =>
    allowed[i]
      ? {
          callId,
          toolCallId: ids[i],
          name: request.name,
          arguments: request.arguments,
          afterLineIndex,
          decidedAt,
        }
      : null,
  );
  const results: (ToolCallResult | null)[] = requested.map(() => null);
  inputs.forEach((input, i) => {
    if (!input) return;
    tools.made += 1;
    call.toolCallCount += 1;
    const step = toolStep(input.name, requested[i].timeoutSeconds, toolsTaskQueue(call));
    running.push(
      step.run
        .executeWithOptions({ ...step.options, summary: `${input.name} ${input.toolCallId}` }, [input])
        .then(
          (result) => {
            results[i] = result;
          },
          async (error: unknown) => {
            if (!failedForGood(error)) throw error;
            // The step gave up without an answer (every attempt timed out or its worker died).
            const result: ToolCallResult = {
              status: 'failed',
              result: TOOL_UNAVAILABLE,
              attempts: TOOL_CALL_ATTEMPTS,
              responseStatus: null,
              durationMs: null,
            };
            await records.recordToolCall({ ...rowOf(input), ...result });
            results[i] = result;
          },
        ),
    );
  });

  const allDone = Promise.all(running);
  // The wait for a hang-up ends with this round, so no predicate is left over for the call's life.
  const hangUp = new CancellationScope();
  await Promise.race([allDone, hangUp.run(() => condition(() => call.hungUp !== null))]);
  hangUp.cancel();
  const unfinished = inputs.filter((input, i): input is ToolCallInput => input !== null && !results[i]);
  if (call.hungUp !== null && unfinished.length > 0) {
    // The call ended first: what is still running is dropped (not cancelled mid-flight).
    for (const input of unfinished) {
      await records.recordToolCall({
        ...rowOf(input),
        status: 'canceled',
        attempts: 0,
        responseStatus: null,
        result: null,
        durationMs: null,
      });
    }
    return false;
  }
  await allDone;
  requested.forEach((request, i) => {
    const result = results[i];
    if (result?.status === 'invalid_arguments') tools.invalid += 1;
    tools.exchanges.push({
      id: ids[i],
      name: request.name,
      arguments: request.arguments,
      result: result ? result.result : TOOL_LIMIT,
      afterLineIndex,
    });
  });
  return true;
}

/** The row's columns the workflow knows (the arguments as the model gave them, an object when they parse). */
function rowOf(input: ToolCallInput) {
  return {
    id: input.toolCallId,
    callId: input.callId,
    name: input.name,
    arguments: argumentsObject(input.arguments),
    afterLineIndex: input.afterLineIndex,
    createdAt: input.decidedAt,
  };
}

function argumentsObject(raw: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
