import type { CallAnalysisData } from '../../db/entities/index.js';
import type { TranscriptLine } from '../calls/transcript.js';
import type { CallEnding } from './known-outcome.js';

export const CALL_OUTCOMES = ['resolved', 'escalated', 'abandoned', 'transferred'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

/** The analysis as the call stores it; `created_at` is stamped when it is stored. */
export type CallAnalysisResult = Omit<CallAnalysisData, 'created_at'>;

/** What the analysis plan asked for (lib/analysis/plan-answerer.ts): null without a plan or a model. */
export type PlanAnswers = Pick<CallAnalysisData, 'data' | 'success' | 'success_reason'>;

export const NO_PLAN_ANSWERS: PlanAnswers = { data: null, success: null, success_reason: null };

/** What an analyzer reads from every call, plan or not: the summary, outcome, sentiment and action items. */
export type TranscriptReading = Omit<CallAnalysisResult, keyof PlanAnswers>;

/**
 * The analysis port: reads a finished call's transcript and says what happened. How the call
 * ended (`ending`) settles the outcome where it can (known-outcome.ts), before any wording.
 */
export interface CallAnalyzer {
  /** True when it answers in the worker itself (the transcript rules), as VoiceRuntime.runsInProcess. */
  readonly runsInProcess?: boolean;
  analyze(transcript: TranscriptLine[], ending: CallEnding): Promise<TranscriptReading>;
}

/** A refusal that retrying cannot fix (bad configuration, an answer of the wrong shape). */
export class AnalysisRejectedError extends Error {
  override name = 'AnalysisRejectedError';
}
