import type { AgentTool } from '../../db/entities/index.js';
import { TOOL_TIMEOUT_SECONDS } from '../../lib/agent-tools/tool-rules.js';
import { agentToolsProblem } from '../../lib/agent-tools/tools-problem.js';
import { parameterInvalid } from '../http/errors.js';
import type { ApiContext } from '../http/route.js';
import { uuidParams } from '../schemas/common.js';

// What the agent routes (agents.ts, agent-tools-secret.ts) share.

export const agentParams = uuidParams('agent_id');
export const agentMissing = { description: 'resource_missing: no such agent in the workspace.' };
/** What a 400 of POST and PATCH /agents may say beyond the schema (docs/agent-tools.md). */
export const toolsRefused = {
  description:
    'parameter_invalid naming the field, also for tools beyond their schema: tools[2].name (another tool has it), tools[0].parameters (not a valid JSON Schema of "type": "object" within 16 KiB), tools[1].url (not public https); transfer_destinations[1].number (listed twice); analysis_plan.data_schema (as a tool\'s parameters). parameter_missing at voicemail.message when voicemail.action is leave_message without a message.',
};
/** What a 422 of POST and PATCH /agents may say of a transfer destination (api/routes/transfer-destinations.ts). */
export const destinationsRefused = {
  description:
    "emergency_number or destination_not_allowed naming the field, transfer_destinations[2].number: a high-cost number, a country outside the workspace's dialing countries, or one of the agent's own numbers.",
};

/** A Tool of a request body, as the schema passed it. */
export interface ToolInput {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  url: string;
  timeout_seconds?: number;
  speak_while_waiting?: string | null;
}

/**
 * The tools of a POST or PATCH, checked beyond their schema (lib/agent-tools/tools-problem.ts) and
 * ready to store; the first problem is 400 parameter_invalid naming its field, before anything is
 * written.
 */
export async function toolsToStore(ctx: ApiContext, tools: readonly ToolInput[]): Promise<AgentTool[]> {
  const problem = await agentToolsProblem(tools, {
    allowPrivate: ctx.state.deps.settings.webhooksAllowPrivateTargets,
  });
  if (problem) throw parameterInvalid(problem.param, problem.message);
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    url: tool.url,
    timeoutSeconds: tool.timeout_seconds ?? TOOL_TIMEOUT_SECONDS.default,
    speakWhileWaiting: tool.speak_while_waiting ?? null,
  }));
}
