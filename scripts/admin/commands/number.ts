import { createPhoneNumber } from '../../../lib/accounts.js';
import { defineCommand } from '../command.js';

export const numberCreate = defineCommand({
  name: 'number create',
  summary: 'Register a phone number the workspace owns (unique across workspaces).',
  flags: {
    workspace: { type: 'string', required: true, value: 'ID', help: 'workspace id' },
    number: { type: 'string', required: true, value: '+E164', help: 'e.g. +4721000000' },
    label: { type: 'string', value: 'TEXT', help: 'label, at most 200 characters' },
  },
  async run({ workspace, number, label }, context) {
    const phoneNumber = await createPhoneNumber(await context.em(), {
      workspaceId: workspace,
      number,
      label,
    });
    return {
      json: { id: phoneNumber.id, number: phoneNumber.number },
      text: `Created number ${phoneNumber.id} ${phoneNumber.number}${label ? ` "${label}"` : ''} in workspace ${workspace}`,
    };
  },
});
