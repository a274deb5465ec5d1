import type OpenAI from 'openai';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import type { TranscriptLine } from '../calls/transcript.js';
import { chatCompletionsUrl, classifyRequestFailure, openAiCompatibleClient } from '../llm/openai-client.js';
import {
  AnalysisRejectedError,
  CALL_OUTCOMES,
  type CallAnalysisResult,
  type CallAnalyzer,
  type TranscriptReading,
} from './analyzer.js';
import { type CallEnding, knownOutcome } from './known-outcome.js';
import { transcriptForModel } from './transcript-for-model.js';

// Analysis by a language model behind an OpenAI-compatible chat-completions endpoint, asked for
// a JSON-schema response of the same shape the default analyzer gives. Enabled by
// ANALYSIS_LLM_URL (base URL, e.g. https://host/v1), ANALYSIS_LLM_API_KEY, ANALYSIS_LLM_MODEL.
// It talks through the same client as the voice runtime (lib/llm/openai-client.ts): the official
// `openai` package, its retries off (the analyzeCall activity is retried by Temporal).

export interface LlmAnalyzerOptions {
  url: string;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
}

const SENTIMENTS = ['positive', 'neutral', 'negative'] as const;

const RESPONSE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['summary', 'outcome', 'sentiment', 'action_items'],
  properties: {
    summary: { type: 'string', description: 'A few sentences on what happened in the call.' },
    outcome: { type: ['string', 'null'], enum: [...CALL_OUTCOMES, null] },
    sentiment: { type: ['string', 'null'], enum: [...SENTIMENTS, null] },
    action_items: { type: 'array', items: { type: 'string' } },
  },
} as const;

const INSTRUCTIONS = [
  'You analyse phone calls between an AI voice agent and a person.',
  'Read the transcript and answer with JSON only, following the schema.',
  'outcome: "resolved" when the request was handled, "escalated" when it was handed to a manager or',
  'complaint process, "abandoned" when the person left before saying anything of substance,',
  '"transferred" when the agent transferred the call to a person, null when none fits.',
  "sentiment: the person's mood (positive, neutral, negative), null when they said nothing.",
  'action_items: follow-ups promised or requested, each a short imperative sentence.',
  'The first line says how the call ended, as the phone system recorded it (end_reason).',
].join(' ');

export { chatCompletionsUrl };

export class LlmAnalyzer implements CallAnalyzer {
  private readonly client: OpenAI;

  constructor(private readonly options: LlmAnalyzerOptions) {
    this.client = openAiCompatibleClient(options);
  }

  async analyze(transcript: TranscriptLine[], ending: CallEnding): Promise<TranscriptReading> {
    const { timeoutMs, apiKey } = this.options;
    const deadline = AbortSignal.timeout(timeoutMs);
    let body: unknown;
    try {
      body = await this.client.chat.completions.create(
        {
          model: this.options.model,
          temperature: 0,
          messages: [
            { role: 'system', content: INSTRUCTIONS },
            {
              role: 'user',
              content: transcriptForModel(transcript, ending),
            },
          ],
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'call_analysis', strict: true, schema: RESPONSE_SCHEMA },
          },
        },
        { signal: deadline, timeout: timeoutMs, maxRetries: 0 },
      );
    } catch (error) {
      const failure = classifyRequestFailure(error, {
        apiKey,
        timedOut: deadline.aborted,
        what: 'analysis endpoint',
        timeoutMs,
      });
      // 408, 429 and 5xx (and no answer at all) are passing troubles (retried); any other
      // refusal is configuration. A garbled answer is not retried either.
      if (failure.kind === 'bad_answer' || (failure.kind === 'status' && !failure.retryable)) {
        throw new AnalysisRejectedError(failure.message);
      }
      throw new Error(failure.message);
    }
    const answer = parseAnswer(body);
    // What the record says wins over the model's reading of the words.
    const known = knownOutcome(transcript, ending);
    return known ? { ...answer, outcome: known.outcome } : answer;
  }
}

function parseAnswer(body: unknown): TranscriptReading {
  let content: unknown;
  try {
    // A server that answers without a JSON content type gives text: parse it the same way.
    const completion = (typeof body === 'string' ? JSON.parse(body) : body) as ChatCompletion;
    content = JSON.parse(completion.choices[0].message.content ?? '');
  } catch {
    throw new AnalysisRejectedError('analysis endpoint did not answer with a JSON message');
  }
  const answer = content as Record<string, unknown>;
  const outcome = answer.outcome ?? null;
  const sentiment = answer.sentiment ?? null;
  const valid =
    typeof answer.summary === 'string' &&
    (outcome === null || (CALL_OUTCOMES as readonly unknown[]).includes(outcome)) &&
    (sentiment === null || (SENTIMENTS as readonly unknown[]).includes(sentiment)) &&
    Array.isArray(answer.action_items) &&
    answer.action_items.every((item) => typeof item === 'string');
  if (!valid) throw new AnalysisRejectedError('analysis answer does not follow the schema');
  return {
    summary: answer.summary as string,
    outcome: outcome as CallAnalysisResult['outcome'],
    sentiment: sentiment as CallAnalysisResult['sentiment'],
    action_items: answer.action_items as string[],
  };
}
