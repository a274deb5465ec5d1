import { bootstrapDemoWorkspace } from '../../../lib/accounts.js';
import type { Settings } from '../../../lib/settings.js';
import { defineCommand } from '../command.js';

export const bootstrap = defineCommand({
  name: 'bootstrap',
  summary: 'Create a demo workspace, its owner, a key with every scope and two numbers (a new set each run).',
  flags: {},
  async run(_flags, context) {
    const demo = await bootstrapDemoWorkspace(await context.em());
    const apiBaseUrl = apiBaseUrlOf(context.settings);
    return {
      json: {
        workspace: { id: demo.workspace.id, name: demo.workspace.name, plan: demo.workspace.plan },
        owner: { id: demo.owner.id, email: demo.owner.email, role: demo.owner.role },
        key: { id: demo.key.id, name: demo.key.name, scopes: demo.key.scopes, secret: demo.secret },
        numbers: demo.numbers.map((n) => ({ id: n.id, number: n.number, label: n.label })),
        api_base_url: apiBaseUrl,
      },
      text: [
        `Workspace  ${demo.workspace.id} "${demo.workspace.name}" (plan ${demo.workspace.plan})`,
        `Owner      ${demo.owner.id} ${demo.owner.email}`,
        `Key        ${demo.key.id} with every scope`,
        `Secret     ${demo.secret}   (shown only now)`,
        ...demo.numbers.map((n) => `Number     ${n.id} ${n.number} "${n.label}"`),
        '',
        `Try it (with npm start running):`,
        `  curl -s ${apiBaseUrl}/me -H "Authorization: Bearer ${demo.secret}"`,
      ].join('\n'),
    };
  },
});

/** Where `npm start` serves the API with these settings; a wildcard host is reached on loopback. */
function apiBaseUrlOf(settings: Pick<Settings, 'host' | 'port'>): string {
  const host = ['0.0.0.0', '::', ''].includes(settings.host) ? '127.0.0.1' : settings.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${settings.port}/v1`;
}
