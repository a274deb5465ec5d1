// What the call workflow asks the calls worker once per answered call, before the agent's first
// step (activities/call-runtime.ts), so that each step runs the way it should from its first
// attempt: a runtime that answers in the worker as a local activity, one that calls out (a
// language model) with timeouts derived from its own (workflows/call/steps.ts). The answer is in the history,
// so a replay takes the same path.

export interface CallRuntime {
  /**
   * How long one attempt of the voice runtime may take when it calls out (`VOICE_LLM_TIMEOUT_MS`):
   * the agent's steps then take timeouts derived from it
   * (workflows/activity-options.ts). Null: it answers in the worker (the scripted agent).
   */
  agentTimeoutMs: number | null;
  /** The analyzer calls out (a language model): the analysis is an activity, else a local activity. */
  analyzerCallsOut: boolean;
}
