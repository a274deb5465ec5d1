// What the deployment's voice runtime uses for every agent, shown read-only on the Agent
// (`voice.provider`, `llm`). This deployment's runtime is the built-in call simulator: its
// conversations are scripted, so it names itself rather than a model it does not run. A deployment
// with a real voice runtime changes these values; agents record them at creation and calls
// snapshot them, so a call always shows what it ran with.

export const VOICE_RUNTIME = {
  voiceProvider: 'simulator',
  llmProvider: 'simulator',
  llmModel: 'scripted-conversation-v1',
} as const;

export const DEFAULT_AGENT_LANGUAGE = 'nb-NO';
