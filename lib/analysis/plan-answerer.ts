import type OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { AnalysisPlan } from '../../db/entities/index.js';
import { compileToolParameters } from '../agent-tools/tool-parameters.js';
import type { TranscriptLine } from '../calls/transcript.js';
import { classifyRequestFailure, openAiCompatibleClient } from '../llm/openai-client.js';
import type { Logger } from '../logger.js';
import type { LlmEndpoint, Settings } from '../settings.js';
import { NO_PLAN_ANSWERS, type PlanAnswers } from './analyzer.js';
import type { CallEnding } from './known-outcome.js';
import { transcriptForModel } from './transcript-for-model.js';

// The answers to an agent's analysis plan (post-call spec section 1), by a language model behind
// an OpenAI-compatible chat-completions endpoint: ANALYSIS_LLM_*, else VOICE_LLM_* with its model.
// Two questions, each with a strict JSON-schema response format: the data by the plan's
// `data_schema`, and the verdict on its `success_criteria`. An answer that does not validate is
// asked for again once, then left null with the reason in the log; so is a refusal (400, 401,
// 404: retrying cannot fix it). Passing trouble (429, 5xx, no answer) is thrown: the analysis
// activity is retried by Temporal, and after its last attempt the call is analysed without them.

/** The port the analysis step asks; null in the worker when no language model is configured. */
export interface PlanAnswerer {
  answer(input: {
    callId: string;
    transcript: TranscriptLine[];
    ending: CallEnding;
    plan: AnalysisPlan;
  }): Promise<PlanAnswers>;
}

/** The plan is read at least this long: a voice model's 10 s turn budget is too short for a whole call. */
const PLAN_TIMEOUT_FLOOR_MS = 30_000;

const VERDICT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['success', 'reason'],
  properties: {
    success: { type: 'boolean', description: 'Whether the call met the success criteria.' },
    reason: { type: 'string', description: 'One or two sentences on why, citing what was said.' },
  },
} as const;

const DATA_INSTRUCTIONS = [
  'You read the transcript of a phone call between an AI voice agent and a person.',
  'Extract the data the JSON schema describes from what was said, and answer with JSON only.',
  'Where the call did not say a value and the schema allows null, use null; never invent one.',
  'The first line says how the call ended, as the phone system recorded it (end_reason).',
].join(' ');

const verdictInstructions = (criteria: string) =>
  [
    'You read the transcript of a phone call between an AI voice agent and a person and judge',
    'whether the call met the success criteria below. Answer with JSON only: "success" true or',
    'false, and "reason", one or two sentences on why, citing what was said.',
    'The first line says how the call ended, as the phone system recorded it (end_reason).',
    `Success criteria: ${criteria}`,
  ].join(' ');

/** The endpoint the plan is answered with, or none: the analysis model, else the voice model. */
export function planEndpointFromSettings(
  settings: Pick<Settings, 'analysisLlm' | 'voiceLlm'>,
): LlmEndpoint | undefined {
  const endpoint = settings.analysisLlm ?? settings.voiceLlm;
  return endpoint && { ...endpoint, timeoutMs: Math.max(endpoint.timeoutMs, PLAN_TIMEOUT_FLOOR_MS) };
}

export function planAnswererFromSettings(
  settings: Pick<Settings, 'analysisLlm' | 'voiceLlm'>,
  logger: Logger,
): PlanAnswerer | null {
  const endpoint = planEndpointFromSettings(settings);
  return endpoint ? new LlmPlanAnswerer(endpoint, logger) : null;
}

/** One question's answer: the JSON, or why there is none (logged; the field stays null). */
type Asked = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

export class LlmPlanAnswerer implements PlanAnswerer {
  private readonly client: OpenAI;

  constructor(
    private readonly endpoint: LlmEndpoint,
    private readonly logger: Logger,
  ) {
    this.client = openAiCompatibleClient(endpoint);
  }

  async answer(input: Parameters<PlanAnswerer['answer']>[0]): Promise<PlanAnswers> {
    const { plan, callId } = input;
    const transcript = transcriptForModel(input.transcript, input.ending);
    const [data, verdict] = await Promise.all([
      plan.dataSchema ? this.data(transcript, plan.dataSchema) : null,
      plan.successCriteria ? this.verdict(transcript, plan.successCriteria) : null,
    ]);
    const answers = { ...NO_PLAN_ANSWERS };
    if (data?.ok) answers.data = data.value;
    else if (data) this.logger.warn('analysis plan: data left null', { callId, reason: data.reason });
    if (verdict?.ok) {
      answers.success = verdict.value.success as boolean;
      answers.success_reason = verdict.value.reason as string;
    } else if (verdict)
      this.logger.warn('analysis plan: verdict left null', { callId, reason: verdict.reason });
    return answers;
  }

  private data(transcript: string, schema: Record<string, unknown>): Promise<Asked> {
    const compiled = compileToolParameters(schema);
    // Checked when the plan was written; a schema the compiler no longer takes is logged, not thrown.
    if (!compiled.ok) return Promise.resolve({ ok: false, reason: `data_schema ${compiled.problem}` });
    const problem = (value: unknown) =>
      compiled.validate(value) ? null : (compiled.validate.errors ?? []).map(describeError).join('; ');
    return this.ask('call_data', schema, DATA_INSTRUCTIONS, transcript, problem);
  }

  private verdict(transcript: string, criteria: string): Promise<Asked> {
    const problem = (value: unknown) => {
      const answer = value as Record<string, unknown>;
      if (typeof answer.success !== 'boolean') return '"success" must be true or false';
      if (typeof answer.reason !== 'string' || answer.reason.trim() === '')
        return '"reason" must be a sentence';
      return null;
    };
    return this.ask('call_verdict', VERDICT_SCHEMA, verdictInstructions(criteria), transcript, problem);
  }

  /** Asks once, and once more with what was wrong when the answer does not validate. */
  private async ask(
    name: string,
    schema: object,
    instructions: string,
    transcript: string,
    problemOf: (value: unknown) => string | null,
  ): Promise<Asked> {
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: instructions },
      { role: 'user', content: transcript },
    ];
    let reason = '';
    for (let attempt = 1; attempt <= 2; attempt++) {
      const content = await this.complete(name, schema, messages);
      if (content.refused !== undefined) return { ok: false, reason: content.refused };
      const value = parseObject(content.text);
      const problem = value === null ? 'the answer is not a JSON object' : problemOf(value);
      if (problem === null) return { ok: true, value: value as Record<string, unknown> };
      reason = `${name}: ${problem} (asked ${attempt} times)`;
      messages.push(
        { role: 'assistant', content: content.text },
        {
          role: 'user',
          content: `That answer does not follow the schema: ${problem}. Answer again with JSON that does.`,
        },
      );
    }
    return { ok: false, reason };
  }

  private async complete(
    name: string,
    schema: object,
    messages: ChatCompletionMessageParam[],
  ): Promise<{ text: string; refused?: undefined } | { refused: string }> {
    const { timeoutMs, apiKey, model } = this.endpoint;
    const deadline = AbortSignal.timeout(timeoutMs);
    try {
      const completion = await this.client.chat.completions.create(
        {
          model,
          temperature: 0,
          messages,
          response_format: {
            type: 'json_schema',
            json_schema: { name, schema: schema as Record<string, unknown>, strict: true },
          },
        },
        { signal: deadline, timeout: timeoutMs, maxRetries: 0 },
      );
      // A server that answers without a JSON content type gives text: read it the same way.
      const body = (
        typeof completion === 'string' ? JSON.parse(completion) : completion
      ) as typeof completion;
      return { text: body.choices?.[0]?.message?.content ?? '' };
    } catch (error) {
      const failure = classifyRequestFailure(error, {
        apiKey,
        timedOut: deadline.aborted,
        what: 'analysis plan',
        timeoutMs,
      });
      if (failure.kind === 'status' && !failure.retryable) return { refused: failure.message };
      if (failure.kind === 'bad_answer') return { refused: failure.message };
      throw new Error(failure.message);
    }
  }
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function describeError(error: { instancePath: string; message?: string }): string {
  return `${error.instancePath || '(root)'} ${error.message ?? 'is invalid'}`;
}
