import { findWorkspace, limitsOf, setLimits, type WorkspaceLimits } from '../../../lib/accounts.js';
import { defineCommand } from '../command.js';

export const limitsSet = defineCommand({
  name: 'limits set',
  summary: "Change a workspace's limits (the ones given; the others stay) and print all of them.",
  flags: {
    workspace: { type: 'string', required: true, value: 'ID', help: 'workspace id' },
    requestsPerSecond: { type: 'integer', value: 'N', help: 'API requests per second (429 rate_limited)' },
    callsPerMinute: {
      type: 'integer',
      value: 'N',
      help: 'outbound calls per minute (429 call_rate_limited)',
    },
    callsPerDay: { type: 'integer', value: 'N', help: 'outbound calls per UTC day (429 call_daily_limit)' },
    minutesQuota: { type: 'integer', value: 'N', help: 'call minutes per UTC month (429 quota_exceeded)' },
    dialingCountries: {
      type: 'string',
      value: 'NO,SE|*|default',
      help: "countries its calls may go to (ISO 3166 codes; * every one; default: the deployment's DIALING_COUNTRIES)",
    },
    recordingRetentionDays: {
      type: 'string',
      value: 'N|none',
      help: "days a call's recording is kept (0: none once the call is final; none: until deleted)",
    },
  },
  async run({ workspace, ...limits }, context) {
    const updated = await setLimits(await context.em(), { workspaceId: workspace, ...limits });
    return limitsOutput(updated.id, limitsOf(updated, context.settings.dialingCountries));
  },
});

export const limitsShow = defineCommand({
  name: 'limits show',
  summary: "Print a workspace's limits, its dialing countries among them.",
  flags: {
    workspace: { type: 'string', required: true, value: 'ID', help: 'workspace id' },
  },
  async run({ workspace }, context) {
    const found = await findWorkspace(await context.em(), workspace);
    return limitsOutput(found.id, limitsOf(found, context.settings.dialingCountries));
  },
});

function limitsOutput(workspaceId: string, limits: WorkspaceLimits) {
  const shown = (value: unknown) =>
    Array.isArray(value) ? value.join(',') : value === null ? 'none (kept until deleted)' : String(value);
  return {
    json: { workspace_id: workspaceId, ...limits },
    text: [
      `Limits of workspace ${workspaceId}:`,
      ...Object.entries(limits).map(([name, value]) => `  ${name}: ${shown(value)}`),
    ].join('\n'),
  };
}
