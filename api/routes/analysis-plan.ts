import type { AnalysisPlan } from '../../db/entities/index.js';
import { toolParametersProblem } from '../../lib/agent-tools/tool-parameters.js';
import { parameterInvalid } from '../http/errors.js';

// An agent's analysis plan, checked beyond its schema before anything is written: `data_schema`
// under a tool's `parameters` rules (an object schema, valid 2020-12, 16 KiB, 64 levels), refused
// with 400 parameter_invalid at `analysis_plan.data_schema`.

/** The plan of a request body, as the schema passed it. */
export interface AnalysisPlanInput {
  data_schema?: Record<string, unknown> | null;
  success_criteria?: string | null;
}

const DATA_SCHEMA_PARAM = 'analysis_plan.data_schema';

export function analysisPlanToStore(plan: AnalysisPlanInput | null): AnalysisPlan | null {
  if (plan === null) return null;
  const dataSchema = plan.data_schema ?? null;
  if (dataSchema !== null) {
    const problem = toolParametersProblem(dataSchema);
    if (problem) throw parameterInvalid(DATA_SCHEMA_PARAM, `${DATA_SCHEMA_PARAM} ${problem}.`);
  }
  return { dataSchema, successCriteria: plan.success_criteria ?? null };
}
