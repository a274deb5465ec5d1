import { SEND_DIGITS_PATTERN } from '../calls/keypad-line.js';
import { isE164 } from '../e164.js';
import {
  END_CALL,
  SEND_DIGITS,
  TRANSFER_CALL,
  TRANSFER_UNAVAILABLE,
  transferNotAllowed,
} from './llm-prompt.js';
import type { TransferTarget } from './transfer-target.js';
import type { AgentAction } from './voice-runtime.js';

// What the model's tool calls ask for (lib/voice-runtime/openai-compatible-runtime.ts): the built-in
// `end_call`, `transfer_call` (only to one of the call's targets) and `send_digits`; a workspace's
// own tools are run by the agent-tools step, not read here.

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * The first tool call that means something: `end_call`, or `transfer_call` to one of the call's
 * targets (`transferTo`, transfer-target.ts). A number the model gives that is not one of them is
 * refused (`transfer_not_allowed`), as is any transfer of a call without a target, or one without a
 * number when there is a choice: nothing is dialled and the model is told why.
 */
export function actionOf(
  toolCalls: ToolCall[],
  transferTo: readonly TransferTarget[],
):
  | AgentAction
  | {
      kind: 'transfer_refused';
      toolCallId: string;
      call: { name: string; arguments: string };
      result: string;
    } {
  for (const call of toolCalls) {
    if (call.name === END_CALL) return { kind: 'hang_up' };
    if (call.name === TRANSFER_CALL) {
      const asked = transferNumberOf(call.arguments);
      const target =
        asked === null && transferTo.length === 1
          ? transferTo[0]
          : transferTo.find((allowed) => allowed.number === asked);
      if (target) return { kind: 'transfer', to: target.number };
      return {
        kind: 'transfer_refused',
        toolCallId: call.id || 'transfer_call',
        call: { name: call.name, arguments: call.arguments },
        result:
          transferTo.length > 0
            ? transferNotAllowed(asked ?? '(no number)', transferTo)
            : TRANSFER_UNAVAILABLE,
      };
    }
  }
  return { kind: 'continue' };
}

/** The keys of the first `send_digits` call that gives valid ones (`[0-9*#w]{1,32}`); null: none. */
export function digitsOf(toolCalls: ToolCall[]): string | null {
  for (const call of toolCalls) {
    if (call.name !== SEND_DIGITS) continue;
    try {
      const digits = (JSON.parse(call.arguments) as { digits?: unknown })?.digits;
      if (typeof digits === 'string' && new RegExp(SEND_DIGITS_PATTERN).test(digits)) return digits;
    } catch {
      // Arguments that are not JSON press nothing.
    }
  }
  return null;
}

function transferNumberOf(json: string): string | null {
  try {
    const number = (JSON.parse(json) as { number?: unknown })?.number;
    if (typeof number !== 'string') return null;
    const compact = number.replace(/[\s().-]/g, '');
    return isE164(compact) ? compact : null;
  } catch {
    return null;
  }
}
