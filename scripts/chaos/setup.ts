import { openOrm } from '../../db/orm.js';
import {
  createApiKey,
  createPhoneNumber,
  createUser,
  createWorkspace,
  setLimits,
} from '../../lib/accounts.js';
import { SCOPES } from '../../lib/scopes.js';
import { ApiClient, newTally } from './client.js';
import type { WebhookReceiver } from './receiver.js';

// One workspace per scenario, so that each scenario's calls, events, keys and webhook inbox are
// counted apart: the operator's part (workspace, owner, key with every scope, one number, limits
// far above the run's load) through lib/accounts.ts, the integrator's part (a published agent on
// that number, a webhook endpoint on the local receiver subscribed to every call event) through
// the HTTP API.

export const CALL_EVENTS = ['call.started', 'call.completed', 'call.failed', 'call.transferred'];

export interface WorkspaceFixture {
  label: string;
  workspaceId: string;
  secret: string;
  agentId: string;
  fromNumber: string;
  endpointId: string;
  /** The receiver path of this workspace's endpoint. */
  inboxPath: string;
}

export async function createWorkspaceFixture(input: {
  databaseUrl: string;
  apiUrl: string;
  receiver: WebhookReceiver;
  label: string;
  index: number;
}): Promise<WorkspaceFixture> {
  const { label, index } = input;
  const fromNumber = `+1555${String(100 + index)}0000`;
  const orm = await openOrm(input.databaseUrl, { poolMax: 2 });
  let workspaceId: string;
  let secret: string;
  let numberId: string;
  try {
    const em = orm.em.fork();
    const workspace = await createWorkspace(em, { name: `chaos ${label}`, plan: 'standard' });
    workspaceId = workspace.id;
    const owner = await createUser(em, { workspaceId, email: `owner-${index}@chaos.example`, role: 'owner' });
    ({ secret } = await createApiKey(em, {
      workspaceId,
      userId: owner.id,
      name: `chaos ${label}`,
      scopes: [...SCOPES],
    }));
    numberId = (await createPhoneNumber(em, { workspaceId, number: fromNumber, label: 'chaos line' })).id;
    await setLimits(em, {
      workspaceId,
      requestsPerSecond: 100_000,
      callsPerMinute: 100_000,
      callsPerDay: 1_000_000,
      minutesQuota: 100_000_000,
    });
  } finally {
    await orm.close(true);
  }

  const client = new ApiClient(input.apiUrl, secret, newTally());
  const agent = await client.must(
    'POST',
    '/agents',
    {
      name: `Chaos agent ${label}`,
      system_prompt: 'You call customers of Acme to confirm their appointment.',
      first_message: 'Hi, this is Acme calling about your appointment.',
    },
    `setup-agent-${label}`,
  );
  const agentId = (agent.body as { id: string }).id;
  await client.must('POST', `/agents/${agentId}/publish`);
  await client.must('PATCH', `/phone-numbers/${numberId}`, { agent_id: agentId });
  const inboxPath = `/${label}`;
  const endpoint = await client.must(
    'POST',
    '/webhooks',
    { url: `${input.receiver.url}${inboxPath}`, events: CALL_EVENTS, description: `chaos ${label}` },
    `setup-webhook-${label}`,
  );
  const { id: endpointId, secret: webhookSecret } = endpoint.body as { id: string; secret: string };
  input.receiver.setSecret(inboxPath, webhookSecret);
  return { label, workspaceId, secret, agentId, fromNumber, endpointId, inboxPath };
}
