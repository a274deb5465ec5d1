import type { Settings } from '../settings.js';
import type { CallAnalyzer } from './analyzer.js';
import { LlmAnalyzer } from './llm-analyzer.js';
import { TranscriptAnalyzer } from './transcript-analyzer.js';

export * from './analyzer.js';

/** The analyzer the settings ask for: the LLM adapter when ANALYSIS_LLM_URL is set, else the transcript rules. */
export function analyzerFromSettings(settings: Pick<Settings, 'analysisLlm'>): CallAnalyzer {
  return settings.analysisLlm ? new LlmAnalyzer(settings.analysisLlm) : new TranscriptAnalyzer();
}
