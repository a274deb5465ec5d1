import type { AgentTool } from '../../db/entities/index.js';

/** A Tool as the API shows it (agent-tools spec section 1). */
export function presentAgentTool(tool: AgentTool) {
  return {
    type: 'function' as const,
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    url: tool.url,
    timeout_seconds: tool.timeoutSeconds,
    speak_while_waiting: tool.speakWhileWaiting ?? null,
  };
}
