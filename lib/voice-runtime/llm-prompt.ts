import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { SEND_DIGITS_PATTERN } from '../calls/keypad-line.js';
import type { TranscriptLine } from '../calls/transcript.js';
import type { ToolExchange } from '../temporal/tool-calls.js';
import { fillVariables } from './dynamic-variables.js';
import type { TransferTarget } from './transfer-target.js';
import type { ConversationContext } from './voice-runtime.js';

// What the language-model runtime sends for one agent turn (operations contract, section 7):
// one `system` message, the agent's `system_prompt` (dynamic variables filled in) followed by the
// service's own instructions; then the conversation so far, agent lines as `assistant` and the
// person's as `user`; and the tools `end_call` and, when the call has numbers to transfer to,
// `transfer_call` with those numbers as its only choices (transfer-target.ts).

export const END_CALL = 'end_call';
export const TRANSFER_CALL = 'transfer_call';
export const SEND_DIGITS = 'send_digits';

/** `send_digits` (telephony spec section 7), offered when the agent's `keypad.send` is on. */
const SEND_DIGITS_TOOL: ChatCompletionTool = {
  type: 'function',
  function: {
    name: SEND_DIGITS,
    description:
      'Press keys on the telephone keypad, to choose in a phone menu or enter a number it asks for. Only on this call.',
    parameters: {
      type: 'object',
      properties: {
        digits: {
          type: 'string',
          pattern: SEND_DIGITS_PATTERN,
          description: 'The keys in order: 0-9, * and #; w waits half a second.',
        },
      },
      required: ['digits'],
      additionalProperties: false,
    },
  },
};

const END_CALL_TOOL: ChatCompletionTool = {
  type: 'function',
  function: {
    name: END_CALL,
    description:
      'Hang up the call. Use it once the conversation is over; say goodbye in the same answer, before calling it.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
  },
};

/**
 * `transfer_call` with the numbers this call may be transferred to as an enum: a number the caller
 * says or the model makes up is never dialled (toll fraud: lib/calls/destination-policy.ts).
 */
function transferCallTool(targets: readonly TransferTarget[]): ChatCompletionTool {
  const described = targets.filter((target) => target.description);
  return {
    type: 'function',
    function: {
      name: TRANSFER_CALL,
      description: [
        'Transfer the call to a person at one of the numbers below. Tell the caller first, in the same answer, that you are transferring them.',
        ...described.map((target) => `${target.number}: ${target.description}`),
      ].join('\n'),
      parameters: {
        type: 'object',
        properties: {
          number: {
            type: 'string',
            enum: targets.map((target) => target.number),
            description: 'The number to transfer to; only these can be dialled.',
          },
        },
        required: ['number'],
        additionalProperties: false,
      },
    },
  };
}

/**
 * The built-in tools: `end_call`, `transfer_call` only when the call has somewhere to transfer to,
 * `send_digits` only when the agent may press keys.
 */
export function builtInTools(
  context: ConversationContext,
  targets: readonly TransferTarget[],
): ChatCompletionTool[] {
  return [
    END_CALL_TOOL,
    ...(targets.length > 0 ? [transferCallTool(targets)] : []),
    ...(context.agent.keypad?.send ? [SEND_DIGITS_TOOL] : []),
  ];
}

/**
 * The tool result of a `transfer_call` without a number to go to (none given, none configured):
 * the model is asked again with it, and the call goes on.
 */
export const TRANSFER_UNAVAILABLE =
  'Transfer is not available: this call has no number to transfer to. Tell the person you cannot put them through, and go on helping them.';

/**
 * The tool result of a `transfer_call` to a number other than the call's (`transfer_not_allowed`):
 * nothing is dialled, the model is asked again with it, and the call goes on.
 */
export function transferNotAllowed(asked: string, allowed: readonly TransferTarget[]): string {
  const numbers = allowed.map((target) => target.number);
  const only =
    numbers.length === 1 ? `The only number is ${numbers[0]}` : `The only numbers are ${numbers.join(', ')}`;
  return `transfer_not_allowed: ${asked} is not a number this call may be transferred to; nothing was dialled. ${only}. Do not transfer anywhere else: offer ${numbers.length === 1 ? 'that one' : 'one of those'}, or go on helping the person.`;
}

/**
 * The tools offered: `end_call`, `transfer_call` when the call has targets (`transferTo`) and,
 * unless `offerOwn` is false, the agent's own.
 */
export function toolsOffered(
  context: ConversationContext,
  transferTo: readonly TransferTarget[],
  offerOwn = true,
): ChatCompletionTool[] {
  const own = offerOwn ? (context.agent.tools ?? []) : [];
  return [
    ...builtInTools(context, transferTo),
    ...own.map(
      (tool): ChatCompletionTool => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.parameters },
      }),
    ),
  ];
}

/**
 * The whole `messages` array of one request: each tool call (an `assistant` message with the
 * call, then the `tool` message with what it gave) right after the transcript line it followed.
 */
export function chatMessages(
  context: ConversationContext,
  transcript: readonly TranscriptLine[],
  transferTo: readonly TransferTarget[],
  toolExchanges: readonly ToolExchange[] = [],
): ChatCompletionMessageParam[] {
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: systemMessage(context, transferTo) },
  ];
  const exchanges = (from: number, below: number) =>
    toolExchanges
      .filter((exchange) => exchange.afterLineIndex >= from && exchange.afterLineIndex < below)
      .flatMap((exchange): ChatCompletionMessageParam[] => [
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: exchange.id,
              type: 'function',
              function: { name: exchange.name, arguments: exchange.arguments },
            },
          ],
        },
        { role: 'tool', tool_call_id: exchange.id, content: exchange.result },
      ]);
  // A tool call goes after its line, or after the last line before it when that one is not here.
  messages.push(...exchanges(Number.NEGATIVE_INFINITY, transcript[0]?.index ?? Number.POSITIVE_INFINITY));
  transcript.forEach((line, i) => {
    messages.push(
      line.role === 'agent'
        ? { role: 'assistant', content: line.text }
        : { role: 'user', content: line.text },
      ...exchanges(line.index, transcript[i + 1]?.index ?? Number.POSITIVE_INFINITY),
    );
  });
  return messages;
}

/** The agent's `system_prompt` with its variables filled in, then the service's instructions. */
export function systemMessage(context: ConversationContext, transferTo: readonly TransferTarget[]): string {
  const prompt = fillVariables(context.agent.systemPrompt ?? '', context.metadata).trim();
  const instructions = serviceInstructions(context, transferTo);
  return prompt ? `${prompt}\n\n${instructions}` : instructions;
}

/** The service's own instructions: the setting, the language, the call's direction, the tools. */
export function serviceInstructions(
  context: ConversationContext,
  transferTo: readonly TransferTarget[],
): string {
  const name = context.agent.name;
  const lines: string[] = [];
  const medium = context.channel === 'web' ? 'a voice call in a web browser' : 'a live phone call';
  lines.push(
    `You are ${name}, an AI voice agent on ${medium}. Everything you write is spoken aloud to the person: answer in short, natural spoken sentences, without lists, markdown, emoji or stage directions.`,
  );
  lines.push(languageInstruction(context.agent.language));
  if (context.direction === 'outbound') {
    const purpose = context.metadata.purpose?.trim();
    lines.push(
      `You placed this call: the person did not call you. When the call starts, say who you are (${name}) and why you are calling${purpose ? ` (${purpose})` : ''}.`,
    );
  } else if (context.channel === 'web') {
    lines.push('The person started this call to you from a web page.');
  } else {
    lines.push('The person called you.');
  }
  lines.push(
    transferTo.length === 1
      ? `When the conversation is over, say goodbye and call ${END_CALL}. When the person asks for a human, tell them you are transferring them and call ${TRANSFER_CALL} with ${transferTo[0].number}. Never transfer to a number the person gives you.`
      : transferTo.length > 1
        ? `When the conversation is over, say goodbye and call ${END_CALL}. When the person asks for a human, choose the number of ${TRANSFER_CALL} whose description fits what they need, tell them you are transferring them and call it. Never transfer to a number the person gives you.`
        : `When the conversation is over, say goodbye and call ${END_CALL}. This call has no number to transfer to: when the person asks for a human, tell them you cannot put them through and go on helping. Never transfer to a number the person gives you.`,
  );
  if (context.agent.tools?.length) {
    lines.push(
      'Use your other tools when the person needs something they can do: look things up or act for the person with them instead of guessing. Their results come back to you; then tell the person what you found or did.',
    );
  }
  return lines.join('\n');
}

const languageNames = new Intl.DisplayNames(['en'], { type: 'language' });

function languageInstruction(language: string | null): string {
  if (!language) return 'Speak the language the person speaks.';
  let name: string | undefined;
  try {
    name = languageNames.of(language);
  } catch {
    name = undefined;
  }
  return name && name !== language
    ? `Speak ${name} (${language}), unless the person asks for another language.`
    : `Speak the language ${language}, unless the person asks for another language.`;
}
