import type { CallAnalysisData } from '../../db/entities/index.js';
import type { TranscriptLine } from '../calls/transcript.js';
import type { CallEnding } from './known-outcome.js';

export const CALL_OUTCOMES = ['resolved', 'escalated', 'abandoned', 'transferred'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

/** The analysis as a port returns it; `created_at` is stamped when it is stored. */
export type CallAnalysisResult = Omit<CallAnalysisData, 'created_at'>;

/**
 * The analysis port: reads a finished call's transcript and says what happened. How the call
 * ended (`ending`) settles the outcome where it can (known-outcome.ts), before any wording.
 */
export interface CallAnalyzer {
  /** True when it answers in the worker itself (the transcript rules), as VoiceRuntime.runsInProcess. */
  readonly runsInProcess?: boolean;
  analyze(transcript: TranscriptLine[], ending: CallEnding): Promise<CallAnalysisResult>;
}

/** A refusal that retrying cannot fix (bad configuration, an answer of the wrong shape). */
export class AnalysisRejectedError extends Error {
  override name = 'AnalysisRejectedError';
}
