import { dateTimeSchema, uuidSchema } from './common.js';

// Test runs (post-call spec section 2): simulated callers, played by the language model, against
// an agent, each conversation judged by its scenario's success criteria.

export const MAX_TEST_SCENARIOS = 20;
export const MAX_RUNS_PER_SCENARIO = 10;
export const DEFAULT_MAX_TURNS = 12;

const scenarioSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'caller_prompt', 'success_criteria'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100, description: 'Names the scenario in the results.' },
    caller_prompt: {
      type: 'string',
      minLength: 1,
      maxLength: 4000,
      description: 'Who the language model plays as the caller, and what they want.',
    },
    success_criteria: {
      type: 'string',
      minLength: 1,
      maxLength: 2000,
      description: "What makes the conversation a success: each call's analysis judges it.",
    },
    max_turns: {
      type: 'integer',
      minimum: 1,
      maximum: 50,
      default: DEFAULT_MAX_TURNS,
      description: 'At most this many caller lines; then the caller hangs up.',
    },
  },
} as const;

export const testRunCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['scenarios'],
  properties: {
    scenarios: { type: 'array', minItems: 1, maxItems: MAX_TEST_SCENARIOS, items: scenarioSchema },
    runs_per_scenario: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_RUNS_PER_SCENARIO,
      default: 1,
      description: 'How many conversations of each scenario.',
    },
  },
  examples: [
    {
      scenarios: [
        {
          name: 'Books a cleaning',
          caller_prompt: 'You are Kari Nordmann. You want a dental cleaning next Tuesday morning.',
          success_criteria: 'The agent offered a time on Tuesday morning and the caller accepted it.',
          max_turns: 8,
        },
      ],
      runs_per_scenario: 3,
    },
  ],
} as const;

export const testRunSchema = {
  type: 'object',
  required: ['object', 'id', 'agent_id', 'status', 'created_at', 'completed_at', 'summary', 'results'],
  additionalProperties: false,
  properties: {
    object: { const: 'test_run' },
    id: uuidSchema,
    agent_id: uuidSchema,
    status: { enum: ['queued', 'running', 'completed', 'canceled'] },
    created_at: dateTimeSchema,
    completed_at: { ...dateTimeSchema, type: ['string', 'null'] },
    summary: {
      type: 'object',
      required: ['passed', 'failed', 'errored'],
      additionalProperties: false,
      properties: {
        passed: { type: 'integer', minimum: 0 },
        failed: { type: 'integer', minimum: 0 },
        errored: { type: 'integer', minimum: 0 },
      },
    },
    results: {
      type: 'array',
      items: {
        type: 'object',
        required: ['scenario', 'run', 'call_id', 'status', 'reason'],
        additionalProperties: false,
        properties: {
          scenario: { type: 'string', description: "The scenario's name." },
          run: { type: 'integer', minimum: 1 },
          call_id: { ...uuidSchema, type: ['string', 'null'], description: 'The call, once it started.' },
          status: { enum: ['pending', 'passed', 'failed', 'errored'] },
          reason: { type: ['string', 'null'], description: 'Why it passed, failed or errored.' },
        },
      },
    },
  },
} as const;
