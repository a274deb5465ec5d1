import type { Settings } from '../lib/settings.js';
import { type VoiceRuntimeInfo, voiceRuntimeInfo } from '../lib/voice-runtime/from-settings.js';

// What the deployment's voice runtime uses for every agent, shown read-only on the Agent
// (`voice.provider`, `llm`). Speech is the built-in call simulator's. The language model is the
// OpenAI-compatible one configured by VOICE_LLM_URL (`llm` = `{provider: "openai-compatible",
// model: VOICE_LLM_MODEL}`), or without it the built-in scripted conversation (`simulator`,
// `scripted-conversation-v1`), which names itself rather than a model it does not run. `llm` is
// the runtime in effect when the Agent is read (the setting is the deployment's, not the agent's):
// the runtime the agent's next call runs with. Agents also record it at creation.

/** The runtime an Agent shows, from the API's settings. */
export function agentRuntime(settings: Pick<Settings, 'voiceLlm'>): VoiceRuntimeInfo {
  return voiceRuntimeInfo(settings);
}

export type { VoiceRuntimeInfo };

export const DEFAULT_AGENT_LANGUAGE = 'nb-NO';
