import type { AnalysisPlan } from '../../db/entities/index.js';

/** An agent's analysis plan as the API shows it (post-call spec section 1); null: none. */
export function presentAnalysisPlan(plan: AnalysisPlan | null) {
  if (!plan) return null;
  return { data_schema: plan.dataSchema ?? null, success_criteria: plan.successCriteria ?? null };
}
