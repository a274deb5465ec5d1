import type { Settings } from '../settings.js';
import { OPENAI_COMPATIBLE_PROVIDER, OpenAiCompatibleRuntime } from './openai-compatible-runtime.js';
import { ScriptedAgent } from './scripted-agent.js';
import type { VoiceRuntime } from './voice-runtime.js';

/** The voice runtime the settings ask for: the language model when VOICE_LLM_URL is set, else the scripted agent. */
export function voiceRuntimeFromSettings(
  settings: Pick<Settings, 'voiceLlm' | 'transferNumber'>,
): VoiceRuntime {
  const { transferNumber } = settings;
  return settings.voiceLlm
    ? new OpenAiCompatibleRuntime({ ...settings.voiceLlm, transferNumber })
    : new ScriptedAgent({ transferNumber });
}

/** What an Agent shows of the runtime its calls use (`voice.provider`, `llm`). */
export interface VoiceRuntimeInfo {
  voiceProvider: string;
  llmProvider: string;
  llmModel: string;
}

/**
 * Speech is the call simulator's in this deployment; the language model is the configured
 * OpenAI-compatible one (`VOICE_LLM_MODEL`), or the built-in scripted conversation.
 */
export function voiceRuntimeInfo(settings: Pick<Settings, 'voiceLlm'>): VoiceRuntimeInfo {
  return settings.voiceLlm
    ? {
        voiceProvider: 'simulator',
        llmProvider: OPENAI_COMPATIBLE_PROVIDER,
        llmModel: settings.voiceLlm.model,
      }
    : { voiceProvider: 'simulator', llmProvider: 'simulator', llmModel: 'scripted-conversation-v1' };
}
