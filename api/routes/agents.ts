import { randomUUID } from 'node:crypto';
import { Agent, PhoneNumber } from '../../db/entities/index.js';
import type { Settings } from '../../lib/settings.js';
import { agentRuntime, DEFAULT_AGENT_LANGUAGE } from '../agent-runtime.js';
import { findAgentOr404, readAgentOr404 } from '../auth/workspace-resources.js';
import { agentNotReady } from '../http/errors.js';
import { linksTakingId } from '../http/links.js';
import { listQuerySchema, listSchema, paginate } from '../http/pagination.js';
import { defineRoute, type RouteDefinition } from '../http/route.js';
import { storeAnswerWithWork } from '../middleware/idempotency.js';
import { presentAgent } from '../presenters/agent.js';
import { agentCreateSchema, agentSchema, agentUpdateSchema } from '../schemas/agent.js';
import { deletedSchema } from '../schemas/common.js';
import { refuseLanguageNotServed } from './agent-language.js';
import {
  agentParams,
  destinationsRefused,
  agentMissing as missing,
  toolsRefused,
  toolsToStore,
} from './agent-route-parts.js';
import { analysisPlanToStore } from './analysis-plan.js';
import { transferDestinationsToStore } from './transfer-destinations.js';
import { keypadToStore, voicemailToStore } from './voicemail.js';

// Agent status rules (docs/api-platform.md):
// - publish: draft, unpublished → published; needs a non-blank system_prompt (else 422
//   agent_not_ready, param system_prompt). Publishing a published agent changes nothing (200).
// - unpublish: published → unpublished. Any other agent already takes no calls, so unpublishing it
//   changes nothing (200): the spec lists no 422 for unpublish.
// - archived: no v1 endpoint moves an agent into it; an archived agent cannot be published (422
//   agent_not_ready).
// - PATCH cannot blank the system_prompt of a published agent (422 agent_not_ready).

const agentResponse = { description: 'Agent', schema: agentSchema };

/** The deployment's voice runtime, as the Agent shows it (`llm`). */
const runtimeOf = (ctx: { state: { deps: { settings: Pick<Settings, 'voiceLlm'> } } }) =>
  agentRuntime(ctx.state.deps.settings);

const isBlank = (text: string | null | undefined) => !text || text.trim() === '';

const list = defineRoute({
  method: 'GET',
  path: '/agents',
  operationId: 'listAgents',
  summary: 'List agents, newest first.',
  scope: 'agents:read',
  query: listQuerySchema(),
  responses: { 200: { description: 'A page of agents.', schema: listSchema(agentSchema) } },
  async handler(ctx, { query }) {
    const page = await paginate(
      ctx.state.em,
      Agent,
      { workspace: ctx.state.auth.workspaceId, deletedAt: null },
      query,
      { orderBy: 'createdAt', present: (agent) => presentAgent(agent, runtimeOf(ctx)) },
    );
    return { status: 200, body: page };
  },
});

const create = defineRoute({
  method: 'POST',
  path: '/agents',
  operationId: 'createAgent',
  summary: 'Create an agent (status draft).',
  scope: 'agents:write',
  body: agentCreateSchema,
  idempotent: true,
  responses: {
    400: toolsRefused,
    422: destinationsRefused,
    201: {
      description: 'The new agent, in status draft.',
      schema: agentSchema,
      links: linksTakingId('agent_id', [
        'getAgent',
        'updateAgent',
        'deleteAgent',
        'publishAgent',
        'unpublishAgent',
        'createAgentToolsSecret',
        'createTestRun',
        'listTestRuns',
      ]),
    },
    409: { description: 'idempotency_key_reused or idempotency_request_in_progress.' },
  },
  async handler(ctx, { body }) {
    const tools = await toolsToStore(ctx, body.tools ?? []);
    const analysisPlan = analysisPlanToStore(body.analysis_plan ?? null);
    const voicemail = body.voicemail === undefined ? null : voicemailToStore(body.voicemail);
    const keypad = body.keypad === undefined ? null : keypadToStore(body.keypad);
    const transferDestinations = await transferDestinationsToStore(
      ctx,
      ctx.state.em,
      body.transfer_destinations ?? [],
      null,
    );
    // The agent and the answer under the Idempotency-Key commit together.
    return ctx.state.em.transactional(async (em) => {
      const agent = em.create(Agent, {
        id: randomUUID(),
        workspace: ctx.state.auth.workspaceId,
        name: body.name,
        description: body.description ?? null,
        status: 'draft',
        language: body.language ?? DEFAULT_AGENT_LANGUAGE,
        systemPrompt: body.system_prompt ?? null,
        firstMessage: body.first_message ?? null,
        outboundFirstMessage: body.outbound_first_message ?? null,
        voiceProvider: runtimeOf(ctx).voiceProvider,
        voiceId: body.voice_id ?? null,
        llmProvider: runtimeOf(ctx).llmProvider,
        llmModel: runtimeOf(ctx).llmModel,
        tools,
        transferDestinations,
        analysisPlan,
        voicemail,
        keypad,
        deletedAt: null,
      });
      await em.flush();
      const result = { status: 201, body: presentAgent(agent, runtimeOf(ctx)) };
      await storeAnswerWithWork(em, ctx, result);
      return result;
    });
  },
});

const get = defineRoute({
  method: 'GET',
  path: '/agents/:agent_id',
  operationId: 'getAgent',
  summary: 'Get an agent.',
  scope: 'agents:read',
  params: agentParams,
  responses: { 200: agentResponse, 404: missing },
  async handler(ctx, { params }) {
    const agent = await readAgentOr404(ctx.state.reads, ctx.state.auth.workspaceId, params.agent_id);
    return { status: 200, body: presentAgent(agent, runtimeOf(ctx)) };
  },
});

const update = defineRoute({
  method: 'PATCH',
  path: '/agents/:agent_id',
  operationId: 'updateAgent',
  summary:
    'Change an agent; only the fields sent change (tools, transfer_destinations, analysis_plan, voicemail, keypad: each whole). A published agent uses the change from its next call.',
  scope: 'agents:write',
  params: agentParams,
  body: agentUpdateSchema,
  responses: {
    200: agentResponse,
    400: toolsRefused,
    404: missing,
    422: {
      description: `agent_not_ready: a published agent cannot lose its system_prompt. language_not_supported (param language): a published agent's new language is one the local speech does not hear. ${destinationsRefused.description}`,
    },
  },
  async handler(ctx, { params, body }) {
    const em = ctx.state.em;
    const agent = await findAgentOr404(em, ctx.state.auth.workspaceId, params.agent_id);
    // Checked before any field changes, so a refused PATCH changes nothing.
    const tools = body.tools === undefined ? undefined : await toolsToStore(ctx, body.tools);
    const analysisPlan =
      body.analysis_plan === undefined ? undefined : analysisPlanToStore(body.analysis_plan);
    const voicemail = body.voicemail === undefined ? undefined : voicemailToStore(body.voicemail);
    const keypad = body.keypad === undefined ? undefined : keypadToStore(body.keypad);
    const transferDestinations =
      body.transfer_destinations === undefined
        ? undefined
        : await transferDestinationsToStore(ctx, em, body.transfer_destinations, agent.id);
    if (agent.status === 'published' && body.system_prompt !== undefined && isBlank(body.system_prompt)) {
      throw agentNotReady('A published agent needs a system_prompt; unpublish it first.', 'system_prompt');
    }
    if (agent.status === 'published' && body.language !== undefined) {
      refuseLanguageNotServed(ctx.state.deps.settings, body.language ?? DEFAULT_AGENT_LANGUAGE);
    }
    if (body.name !== undefined) agent.name = body.name;
    if (body.description !== undefined) agent.description = body.description;
    if (body.language !== undefined) agent.language = body.language;
    if (body.system_prompt !== undefined) agent.systemPrompt = body.system_prompt;
    if (body.first_message !== undefined) agent.firstMessage = body.first_message;
    if (body.outbound_first_message !== undefined) agent.outboundFirstMessage = body.outbound_first_message;
    if (body.voice_id !== undefined) agent.voiceId = body.voice_id;
    if (tools !== undefined) agent.tools = tools;
    if (transferDestinations !== undefined) agent.transferDestinations = transferDestinations;
    if (analysisPlan !== undefined) agent.analysisPlan = analysisPlan;
    if (voicemail !== undefined) agent.voicemail = voicemail;
    if (keypad !== undefined) agent.keypad = keypad;
    agent.updatedAt = new Date();
    await em.flush();
    return { status: 200, body: presentAgent(agent, runtimeOf(ctx)) };
  },
});

const remove = defineRoute({
  method: 'DELETE',
  path: '/agents/:agent_id',
  operationId: 'deleteAgent',
  summary: 'Delete an agent: its numbers get agent_id null; past calls and transcripts are kept.',
  scope: 'agents:write',
  params: agentParams,
  responses: { 200: { description: 'Deleted', schema: deletedSchema }, 404: missing },
  async handler(ctx, { params }) {
    const workspaceId = ctx.state.auth.workspaceId;
    const id = await ctx.state.em.transactional(async (em) => {
      const agent = await findAgentOr404(em, workspaceId, params.agent_id);
      agent.deletedAt = new Date();
      await em.nativeUpdate(PhoneNumber, { workspace: workspaceId, agent: agent.id }, { agent: null });
      return agent.id;
    });
    // The stored id, not the path's spelling of it (an upper-case UUID names the same agent).
    return { status: 200, body: { object: 'agent', id, deleted: true } };
  },
});

const publish = defineRoute({
  method: 'POST',
  path: '/agents/:agent_id/publish',
  operationId: 'publishAgent',
  summary: 'Publish an agent: its numbers reach it and it can place calls.',
  scope: 'agents:write',
  params: agentParams,
  responses: {
    200: agentResponse,
    404: missing,
    422: {
      description:
        'agent_not_ready: no system_prompt, or the agent is archived. language_not_supported (param language): with the local speech (VOICE_SPEECH=local), a language it does not hear and speak; the message names those it does.',
    },
  },
  async handler(ctx, { params }) {
    const em = ctx.state.em;
    const agent = await findAgentOr404(em, ctx.state.auth.workspaceId, params.agent_id);
    if (agent.status === 'archived') throw agentNotReady('An archived agent cannot be published.');
    if (isBlank(agent.systemPrompt)) {
      throw agentNotReady('The agent needs a system_prompt before it can be published.', 'system_prompt');
    }
    refuseLanguageNotServed(ctx.state.deps.settings, agent.language ?? DEFAULT_AGENT_LANGUAGE);
    if (agent.status !== 'published') {
      agent.status = 'published';
      agent.updatedAt = new Date();
      await em.flush();
    }
    return { status: 200, body: presentAgent(agent, runtimeOf(ctx)) };
  },
});

const unpublish = defineRoute({
  method: 'POST',
  path: '/agents/:agent_id/unpublish',
  operationId: 'unpublishAgent',
  summary: 'Unpublish an agent: it takes no more phone calls; its settings are kept.',
  scope: 'agents:write',
  params: agentParams,
  responses: {
    200: { description: 'Agent: unpublished, or unchanged when it was not published.', schema: agentSchema },
    404: missing,
  },
  async handler(ctx, { params }) {
    const em = ctx.state.em;
    const agent = await findAgentOr404(em, ctx.state.auth.workspaceId, params.agent_id);
    if (agent.status === 'published') {
      agent.status = 'unpublished';
      agent.updatedAt = new Date();
      await em.flush();
    }
    return { status: 200, body: presentAgent(agent, runtimeOf(ctx)) };
  },
});

export const agentRoutes: RouteDefinition[] = [list, create, get, update, remove, publish, unpublish];
