import { WORKSPACE_PLANS } from '../../../db/entities/index.js';
import { createWorkspace } from '../../../lib/accounts.js';
import { defineCommand } from '../command.js';

export const workspaceCreate = defineCommand({
  name: 'workspace create',
  summary: 'Create a workspace (plan standard unless --plan says otherwise).',
  flags: {
    name: { type: 'string', required: true, value: 'NAME', help: 'display name, at most 200 characters' },
    plan: { type: 'string', value: WORKSPACE_PLANS.join('|'), help: 'billing plan (default standard)' },
  },
  async run({ name, plan }, context) {
    const workspace = await createWorkspace(await context.em(), { name, plan });
    return {
      json: { id: workspace.id, name: workspace.name, plan: workspace.plan },
      text: `Created workspace ${workspace.id} "${workspace.name}" (plan ${workspace.plan})`,
    };
  },
});
