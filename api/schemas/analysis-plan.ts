// An agent's analysis plan (post-call spec section 1): the data each call must produce and the
// verdict against the integrator's criteria. That `data_schema` is a JSON Schema of
// `"type": "object"` within 16 KiB and 64 levels (a tool's `parameters` rules) is checked by
// api/routes/analysis-plan.ts in the handler.

export const SUCCESS_CRITERIA_MAX_LENGTH = 2000;

/** `analysis_plan` of POST and PATCH /agents: the whole plan, or null for none. */
export const analysisPlanRequestSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    // "type": "object" is checked with the rest of the schema in the handler, as a tool's parameters.
    data_schema: {
      type: ['object', 'null'],
      additionalProperties: true,
      description:
        'A JSON Schema (draft 2020-12) of "type": "object": the data each call must produce, at most 16 KiB as JSON; null: none.',
    },
    success_criteria: {
      type: ['string', 'null'],
      maxLength: SUCCESS_CRITERIA_MAX_LENGTH,
      description:
        "What makes a call a success, in the integrator's words; each call gets a verdict. Null or empty: none.",
    },
  },
  description:
    'What each call must produce: data by a JSON Schema and a verdict against success criteria, read from the transcript by the language model after the call. Null: no plan.',
} as const;

export const analysisPlanSchema = {
  type: ['object', 'null'],
  required: ['data_schema', 'success_criteria'],
  additionalProperties: false,
  properties: {
    data_schema: { type: ['object', 'null'], additionalProperties: true },
    success_criteria: { type: ['string', 'null'] },
  },
} as const;
