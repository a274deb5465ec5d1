import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { classifyRequestFailure, openAiCompatibleClient } from '../llm/openai-client.js';
import type { LlmEndpoint, Settings } from '../settings.js';

// The simulated caller of a test run (post-call spec section 2): the language model plays the
// person described by the scenario's `caller_prompt`, one line at a time, text only, and hangs up
// through the `end_call` tool. VOICE_LLM_* plays it (the conversational model), else
// ANALYSIS_LLM_*; without either there is no test run (422 llm_required).

/** One line of the conversation so far, as the caller heard or said it. */
export interface CallerTurn {
  role: 'agent' | 'caller';
  text: string;
}

/** The caller's next move: a line to say (or none), and whether it hangs up after it. */
export interface CallerLine {
  text: string | null;
  hangUp: boolean;
}

/** Why the caller cannot go on; `retryable`: passing trouble (429, 5xx, no answer). */
export class CallerModelError extends Error {
  override name = 'CallerModelError';
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

const END_CALL: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'end_call',
    description: 'Hang up: call it when what you called for is done, or the conversation is over.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
  },
};

const instructions = (callerPrompt: string) =>
  [
    "You are testing a business's AI voice agent by playing a person who phones it.",
    'Stay in your part; never say you are an AI or a test. Say only your own next line, short and',
    'natural as on the phone, in the language the agent speaks. When what you called for is done or',
    'the conversation is over, say goodbye and call end_call.',
    `Your part: ${callerPrompt}`,
  ].join(' ');

/** The endpoint that plays test callers, or none (no test runs): VOICE_LLM, else ANALYSIS_LLM. */
export function callerEndpointFromSettings(
  settings: Pick<Settings, 'analysisLlm' | 'voiceLlm'>,
): LlmEndpoint | undefined {
  return settings.voiceLlm ?? settings.analysisLlm;
}

export function callerModelFromSettings(
  settings: Pick<Settings, 'analysisLlm' | 'voiceLlm'>,
): CallerModel | null {
  const endpoint = callerEndpointFromSettings(settings);
  return endpoint ? new CallerModel(endpoint) : null;
}

export class CallerModel {
  private readonly client: OpenAI;

  constructor(private readonly endpoint: LlmEndpoint) {
    this.client = openAiCompatibleClient(endpoint);
  }

  /** The caller's next line after `conversation`; throws CallerModelError when there is none. */
  async nextLine(callerPrompt: string, conversation: CallerTurn[]): Promise<CallerLine> {
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: instructions(callerPrompt) },
      // The model is the caller: what the agent said is what it hears.
      ...conversation.map(
        (turn): ChatCompletionMessageParam =>
          turn.role === 'agent'
            ? { role: 'user', content: turn.text }
            : { role: 'assistant', content: turn.text },
      ),
    ];
    // A caller who speaks first hears nothing yet.
    if (conversation.length === 0)
      messages.push({ role: 'user', content: '(the agent picked up and is silent)' });
    const { timeoutMs, apiKey, model } = this.endpoint;
    const deadline = AbortSignal.timeout(timeoutMs);
    let completion: Awaited<ReturnType<OpenAI['chat']['completions']['create']>>;
    try {
      completion = await this.client.chat.completions.create(
        { model, messages, tools: [END_CALL], temperature: 0.7, stream: false },
        { signal: deadline, timeout: timeoutMs, maxRetries: 0 },
      );
    } catch (error) {
      const failure = classifyRequestFailure(error, {
        apiKey,
        timedOut: deadline.aborted,
        what: 'test caller model',
        timeoutMs,
      });
      throw new CallerModelError(failure.message, failure.retryable && failure.kind !== 'bad_answer');
    }
    const message = completion.choices?.[0]?.message;
    const text = message?.content?.trim() || null;
    const hangUp = (message?.tool_calls ?? []).some(
      (call) => call.type === 'function' && call.function.name === 'end_call',
    );
    if (!text && !hangUp)
      throw new CallerModelError('test caller model: the answer had no line and no end_call', false);
    return { text, hangUp };
  }
}
