import { URL_NOT_ALLOWED, type UrlPolicy, webhookUrlProblem } from '../webhooks/url-rules.js';
import { toolParametersProblem } from './tool-parameters.js';

// The rules of an agent's tools that no JSON Schema of the request states (the API's schema has
// the rest): names unique within the agent, `parameters` a real object schema, and `url` under the
// webhook endpoints' URL rules, private-address and DNS checks included.

export interface ToolsProblem {
  /** `tools[2].name`, as the API's `param`. */
  param: string;
  message: string;
}

const TOOL_URL_NOT_ALLOWED = 'is not allowed: tools are called at public https addresses only';

/** The first problem in document order (tool by tool, field by field), or null. */
export async function agentToolsProblem(
  tools: readonly { name: string; parameters: unknown; url: string }[],
  policy: UrlPolicy,
): Promise<ToolsProblem | null> {
  // Each URL is resolved once, all at the same time: at most one resolver timeout in all.
  const urlProblems = new Map(tools.map((tool) => [tool.url, webhookUrlProblem(tool.url, policy)]));
  const seen = new Set<string>();
  for (const [index, tool] of tools.entries()) {
    const at = (field: string) => `tools[${index}].${field}`;
    if (seen.has(tool.name)) {
      return {
        param: at('name'),
        message: `${at('name')} must be unique: another tool is named ${tool.name}.`,
      };
    }
    seen.add(tool.name);
    const parameters = toolParametersProblem(tool.parameters);
    if (parameters) return { param: at('parameters'), message: `${at('parameters')} ${parameters}.` };
    const url = await urlProblems.get(tool.url);
    if (url) {
      const said = url === URL_NOT_ALLOWED ? TOOL_URL_NOT_ALLOWED : url.replace(/^url /, '');
      return { param: at('url'), message: `${at('url')} ${said}.` };
    }
  }
  return null;
}
