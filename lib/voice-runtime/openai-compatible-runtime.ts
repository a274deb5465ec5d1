import type OpenAI from 'openai';
import { Stream } from 'openai/core/streaming';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { TranscriptLine } from '../calls/transcript.js';
import { classifyRequestFailure, openAiCompatibleClient } from '../llm/openai-client.js';
import { actionOf, digitsOf, type ToolCall } from './agent-tool-calls.js';
import {
  builtInTools,
  chatMessages,
  END_CALL,
  SEND_DIGITS,
  TRANSFER_CALL,
  toolsOffered,
} from './llm-prompt.js';
import { configuredOpeningLine, introduction } from './opening-line.js';
import { SentenceSplitter } from './sentences.js';
import { type TransferTarget, transferTargets } from './transfer-target.js';
import {
  type AgentTurn,
  type ConversationContext,
  type RespondOptions,
  type VoiceRuntime,
  VoiceRuntimeError,
} from './voice-runtime.js';

// The voice runtime that follows the agent's prompt: each turn is one request to an
// OpenAI-compatible chat-completions endpoint (VOICE_LLM_URL, operations contract section 7),
// `stream: true`, read as server-sent events as they arrive (a plain JSON answer is accepted
// too). Text goes to the voice side sentence by sentence; tool calls, assembled from their
// streamed pieces, decide what happens next: `end_call` hangs up, `transfer_call` transfers.
// Without a tool call the conversation goes on: this runtime never hangs up or transfers by rules.

export interface OpenAiCompatibleRuntimeOptions {
  url: string;
  apiKey: string | undefined;
  model: string;
  /** One attempt of one turn, from the request until the last byte of the answer. */
  timeoutMs: number;
  /** TRANSFER_NUMBER: where a transfer goes when the call's metadata names no `transfer_to`. */
  transferNumber?: string | null;
}

/** The provider name the Agent's `llm` shows while this runtime is on. */
export const OPENAI_COMPATIBLE_PROVIDER = 'openai-compatible';

interface Completion {
  text: string;
  toolCalls: ToolCall[];
  firstTokenMs: number | null;
  answerMs: number;
}

export class OpenAiCompatibleRuntime implements VoiceRuntime {
  private readonly client: OpenAI;

  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  constructor(private readonly options: OpenAiCompatibleRuntimeOptions) {
    this.client = openAiCompatibleClient(options);
  }

  private transferTo(context: ConversationContext): TransferTarget[] {
    return transferTargets(context, this.options.transferNumber ?? null);
  }

  /**
   * The configured opening line (dynamic variables filled in); on an outbound call with none
   * configured the model opens (it knows from its instructions that it placed the call).
   */
  async openingLine(context: ConversationContext, options: RespondOptions = {}): Promise<string | null> {
    const configured = configuredOpeningLine(context);
    if (configured !== undefined) return configured;
    const completion = await this.complete(
      chatMessages(context, [], this.transferTo(context)),
      builtInTools(context, this.transferTo(context)),
      options,
    );
    return completion.text || introduction(context);
  }

  async respond(
    context: ConversationContext,
    transcript: TranscriptLine[],
    options: RespondOptions = {},
  ): Promise<AgentTurn> {
    const transferTo = this.transferTo(context);
    const messages = chatMessages(context, transcript, transferTo, options.toolExchanges);
    const offerOwn = options.offerTools !== false;
    const tools = toolsOffered(context, transferTo, offerOwn);
    const completion = await this.complete(messages, tools, options);
    // The agent's own tools come first: the call runs them and asks again with their results, so
    // an end_call or transfer_call beside them waits for that answer.
    const builtIn = new Set([END_CALL, TRANSFER_CALL, SEND_DIGITS]);
    const own = offerOwn ? completion.toolCalls.filter((call) => !builtIn.has(call.name)) : [];
    if (own.length > 0) {
      return {
        say: completion.text,
        next: { kind: 'continue' },
        toolCalls: own.map(({ name, arguments: args }) => ({ name, arguments: args })),
        timing: { firstTokenMs: completion.firstTokenMs, answerMs: completion.answerMs },
      };
    }
    let next = actionOf(completion.toolCalls, transferTo);
    let say = completion.text;
    let answerMs = completion.answerMs;
    if (next.kind === 'transfer_refused') {
      // Nowhere to transfer to, or not there: the model hears so as the tool's result (nothing is
      // dialled), and its answer goes on the call.
      const followUp = await this.complete(
        [
          ...messages,
          {
            role: 'assistant',
            content: completion.text || null,
            tool_calls: [{ id: next.toolCallId, type: 'function', function: next.call }],
          },
          { role: 'tool', tool_call_id: next.toolCallId, content: next.result },
        ],
        tools,
        options,
      );
      next = actionOf(followUp.toolCalls, transferTo);
      if (next.kind === 'transfer_refused') next = { kind: 'continue' };
      say = [completion.text, followUp.text].filter(Boolean).join(' ');
      answerMs += followUp.answerMs;
    }
    // Keys to press go with the turn (only when offered; keys outside the pattern are not pressed).
    const digits = context.agent.keypad?.send ? digitsOf(completion.toolCalls) : null;
    if (!say && next.kind === 'continue' && !digits) {
      throw new VoiceRuntimeError('the language model answered with neither words nor a tool call', true);
    }
    return {
      say,
      next,
      ...(digits ? { digits } : {}),
      timing: { firstTokenMs: completion.firstTokenMs, answerMs },
    };
  }

  /** The warm transfer's briefing: the conversation so far, and the instruction to brief the person the call goes to. */
  async briefing(
    context: ConversationContext,
    transcript: TranscriptLine[],
    options: RespondOptions = {},
  ): Promise<string> {
    const messages: ChatCompletionMessageParam[] = [
      ...chatMessages(context, transcript, []),
      { role: 'system', content: BRIEFING_INSTRUCTION },
    ];
    const completion = await this.complete(messages, [], options);
    if (!completion.text) throw new VoiceRuntimeError('the language model gave no briefing', true);
    return completion.text;
  }

  /** One request: the answer's text (sentences handed over as they complete) and its tool calls. */
  private async complete(
    messages: ChatCompletionMessageParam[],
    offered: ChatCompletionTool[],
    options: RespondOptions,
  ): Promise<Completion> {
    const { timeoutMs, apiKey } = this.options;
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const deadline = AbortSignal.timeout(timeoutMs);
    const request = new AbortController();
    const signal = AbortSignal.any([deadline, request.signal, ...(options.signal ? [options.signal] : [])]);
    let firstTokenMs: number | null = null;
    let text = '';
    const tools = new Map<number, ToolCall>();
    const splitter = new SentenceSplitter((sentence) => options.onSentence?.(sentence));
    const addText = (piece: string | null | undefined) => {
      if (!piece) return;
      firstTokenMs ??= elapsed();
      text += piece;
      splitter.push(piece);
    };
    try {
      const response = await this.client.chat.completions
        .create(
          // No tools at all (a briefing): the key is left out, as servers refuse an empty list.
          {
            model: this.options.model,
            messages,
            ...(offered.length ? { tools: offered } : {}),
            stream: true,
          },
          { signal, timeout: timeoutMs, maxRetries: 0 },
        )
        .asResponse();
      const contentType = response.headers.get('content-type') ?? '';
      if (contentType.includes('text/event-stream')) {
        const stream = Stream.fromSSEResponse<ChatCompletionChunk>(response, request, this.client);
        for await (const chunk of stream) {
          const delta = chunk.choices?.[0]?.delta;
          if (!delta) continue;
          addText(delta.content);
          for (const [position, call] of (delta.tool_calls ?? []).entries()) {
            firstTokenMs ??= elapsed();
            const index = call.index ?? position;
            const tool = tools.get(index) ?? { id: '', name: '', arguments: '' };
            tool.id ||= call.id ?? '';
            tool.name += call.function?.name ?? '';
            tool.arguments += call.function?.arguments ?? '';
            tools.set(index, tool);
          }
        }
        // The stream ends quietly when the request is aborted: a deadline that passed is a timeout.
        if (signal.aborted) throw signal.reason;
      } else {
        // A server that does not stream answers with the whole completion at once.
        const body = JSON.parse(await response.text()) as ChatCompletion;
        const message = body.choices?.[0]?.message;
        if (!message) throw new SyntaxError('the answer has no message');
        addText(message.content);
        for (const [index, call] of (message.tool_calls ?? []).entries()) {
          if (call.type !== 'function') continue;
          firstTokenMs ??= elapsed();
          tools.set(index, {
            id: call.id,
            name: call.function.name,
            arguments: call.function.arguments ?? '',
          });
        }
      }
    } catch (error) {
      request.abort();
      const failure = classifyRequestFailure(error, {
        apiKey,
        timedOut: deadline.aborted,
        what: 'the voice language model',
        timeoutMs,
      });
      throw new VoiceRuntimeError(failure.message, failure.retryable, failure.retryAfterMs);
    }
    splitter.end();
    const toolCalls = [...tools.entries()].sort(([a], [b]) => a - b).map(([, tool]) => tool);
    return { text: text.trim(), toolCalls, firstTokenMs, answerMs: elapsed() };
  }
}

/** What the model is asked for a warm transfer's briefing (telephony spec section 8). */
const BRIEFING_INSTRUCTION =
  'You are now speaking to the colleague this call is being transferred to, not to the caller. In one or two short sentences, tell them who is calling and why, from the conversation above. Say only that.';
