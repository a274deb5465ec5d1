import { limitsOf, setLimits } from '../../../lib/accounts.js';
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
  },
  async run({ workspace, ...limits }, context) {
    const updated = await setLimits(await context.em(), { workspaceId: workspace, ...limits });
    const json = { workspace_id: updated.id, ...limitsOf(updated) };
    return {
      json,
      text: [
        `Limits of workspace ${updated.id}:`,
        ...Object.entries(limitsOf(updated)).map(([name, value]) => `  ${name}: ${value}`),
      ].join('\n'),
    };
  },
});
