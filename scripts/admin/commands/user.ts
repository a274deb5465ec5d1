import { USER_ROLES } from '../../../db/entities/index.js';
import { createUser, removeUser, setUserRole } from '../../../lib/accounts.js';
import { createInvite, DEFAULT_INVITE_HOURS, inviteUrl } from '../../../lib/dashboard/invites.js';
import { dashboardUrl } from '../../../lib/dashboard/url.js';
import { defineCommand } from '../command.js';

const ROLE = { type: 'string', required: true, value: USER_ROLES.join('|'), help: 'workspace role' } as const;

export const userCreate = defineCommand({
  name: 'user create',
  summary: 'Add a person to a workspace with a role.',
  flags: {
    workspace: { type: 'string', required: true, value: 'ID', help: 'workspace id' },
    email: { type: 'string', required: true, value: 'EMAIL', help: 'unique within the workspace' },
    role: ROLE,
  },
  async run({ workspace, email, role }, context) {
    const user = await createUser(await context.em(), { workspaceId: workspace, email, role });
    return {
      json: { id: user.id, role: user.role },
      text: `Created user ${user.id} ${user.email} (role ${user.role}) in workspace ${user.workspace}`,
    };
  },
});

export const userSetRole = defineCommand({
  name: 'user set-role',
  summary: "Change a person's role; their keys act with the new role from the next request.",
  flags: {
    id: { type: 'string', required: true, value: 'ID', help: 'user id' },
    role: ROLE,
  },
  async run({ id, role }, context) {
    const user = await setUserRole(await context.em(), { userId: id, role });
    return {
      json: { id: user.id, role: user.role },
      text: `User ${user.id} ${user.email} is now ${user.role}`,
    };
  },
});

export const userRemove = defineCommand({
  name: 'user remove',
  summary: 'Remove a person from a workspace: their keys stop working, their dashboard sessions end.',
  flags: {
    id: { type: 'string', required: true, value: 'ID', help: 'user id' },
  },
  async run({ id }, context) {
    const user = await removeUser(await context.em(), { userId: id });
    return {
      json: { id: user.id, removed: true },
      text: `Removed user ${user.id} ${user.email} from workspace ${user.workspace}; their keys are revoked and their dashboard sessions ended`,
    };
  },
});

export const userInvite = defineCommand({
  name: 'user invite',
  summary: 'A one-time dashboard link where the person sets a password and is signed in.',
  flags: {
    id: { type: 'string', required: true, value: 'ID', help: 'user id' },
    expiresInHours: {
      type: 'integer',
      value: 'N',
      help: `hours the link stays valid, default ${DEFAULT_INVITE_HOURS}`,
    },
  },
  async run({ id, expiresInHours }, context) {
    const { token, user, expiresAt } = await createInvite(await context.em(), { userId: id, expiresInHours });
    const url = inviteUrl(dashboardUrl(context.settings), token);
    return {
      json: { url },
      text: [`Invite for ${user.email} (valid until ${expiresAt.toISOString()}, usable once):`, url].join(
        '\n',
      ),
    };
  },
});
