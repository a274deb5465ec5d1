import type { CallAnalyzer } from '../lib/analysis/analyzer.js';
import type { PlanAnswerer } from '../lib/analysis/plan-answerer.js';
import type { CallRuntime } from '../lib/temporal/call-runtime.js';
import type { VoiceRuntime } from '../lib/voice-runtime/voice-runtime.js';

/** The calls worker's answer to how its calls' agent and analysis steps run (lib/temporal/call-runtime.ts). */
/** A runtime that calls out and does not say how long a request may take: `VOICE_LLM_TIMEOUT_MS`'s default. */
const DEFAULT_RUNTIME_TIMEOUT_MS = 10_000;

export function createCallRuntimeActivities(deps: {
  voiceRuntime: VoiceRuntime;
  analyzer: CallAnalyzer;
  planAnswerer: PlanAnswerer | null;
}) {
  return {
    async callRuntime(): Promise<CallRuntime> {
      return {
        agentTimeoutMs: deps.voiceRuntime.runsInProcess
          ? null
          : (deps.voiceRuntime.timeoutMs ?? DEFAULT_RUNTIME_TIMEOUT_MS),
        // An analysis plan is answered by a language model: the step then calls out too.
        analyzerCallsOut: !deps.analyzer.runsInProcess || deps.planAnswerer !== null,
      };
    },
  };
}

export type CallRuntimeActivities = ReturnType<typeof createCallRuntimeActivities>;
