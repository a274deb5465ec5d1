import type { TranscriptLine } from '../calls/transcript.js';
import {
  AnalysisRejectedError,
  CALL_OUTCOMES,
  type CallAnalysisResult,
  type CallAnalyzer,
} from './analyzer.js';

// Analysis by a language model behind an OpenAI-compatible chat-completions endpoint, asked for
// a JSON-schema response of the same shape the default analyzer gives. Enabled by
// ANALYSIS_LLM_URL (base URL, e.g. https://host/v1), ANALYSIS_LLM_API_KEY, ANALYSIS_LLM_MODEL.

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
].join(' ');

/** Where the chat-completions call goes: the URL as given when it names the route, else <base>/chat/completions. */
export function chatCompletionsUrl(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return trimmed.endsWith('/chat/completions') ? trimmed : `${trimmed}/chat/completions`;
}

export class LlmAnalyzer implements CallAnalyzer {
  constructor(private readonly options: LlmAnalyzerOptions) {}

  async analyze(transcript: TranscriptLine[]): Promise<CallAnalysisResult> {
    const response = await fetch(chatCompletionsUrl(this.options.url), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
      },
      body: JSON.stringify({
        model: this.options.model,
        temperature: 0,
        messages: [
          { role: 'system', content: INSTRUCTIONS },
          { role: 'user', content: transcript.map((line) => `${line.role}: ${line.text}`).join('\n') },
        ],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'call_analysis', strict: true, schema: RESPONSE_SCHEMA },
        },
      }),
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    const text = await response.text();
    // 408, 429 and 5xx are passing troubles (retried); any other refusal is configuration.
    if (!response.ok) {
      const message = `analysis endpoint answered ${response.status}: ${text.slice(0, 200)}`;
      if (response.status === 408 || response.status === 429 || response.status >= 500)
        throw new Error(message);
      throw new AnalysisRejectedError(message);
    }
    return parseAnswer(text);
  }
}

function parseAnswer(body: string): CallAnalysisResult {
  let content: unknown;
  try {
    content = JSON.parse(JSON.parse(body).choices[0].message.content);
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
