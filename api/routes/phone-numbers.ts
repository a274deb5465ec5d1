import { PhoneNumber } from '../../db/entities/index.js';
import { findAgentOr404, findPhoneNumberOr404 } from '../auth/workspace-resources.js';
import { listQuerySchema, listSchema, paginate } from '../http/pagination.js';
import type { ApiContext } from '../http/route.js';
import { defineRoute, type RouteDefinition } from '../http/route.js';
import { presentPhoneNumber } from '../presenters/phone-number.js';
import { uuidParams } from '../schemas/common.js';
import { phoneNumberSchema, phoneNumberUpdateSchema } from '../schemas/phone-number.js';

// Numbers are created by the operator (`admin number create`); the API lists them and sets which
// agent answers each one.

const numberParams = uuidParams('phone_number_id');
/** How the deployment's numbers are reached, for their `capabilities`. */
const reachOf = (ctx: ApiContext) => ({ sip: ctx.state.deps.settings.media.carrier === 'sip' });
const missing = { description: 'resource_missing: no such number (or agent) in the workspace.' };

const list = defineRoute({
  method: 'GET',
  path: '/phone-numbers',
  operationId: 'listPhoneNumbers',
  summary: 'List phone numbers, newest first.',
  scope: 'numbers:read',
  query: listQuerySchema(),
  responses: { 200: { description: 'A page of phone numbers.', schema: listSchema(phoneNumberSchema) } },
  async handler(ctx, { query }) {
    const page = await paginate(ctx.state.em, PhoneNumber, { workspace: ctx.state.auth.workspaceId }, query, {
      orderBy: 'createdAt',
      present: (number: PhoneNumber) => presentPhoneNumber(number, reachOf(ctx)),
    });
    return { status: 200, body: page };
  },
});

const get = defineRoute({
  method: 'GET',
  path: '/phone-numbers/:phone_number_id',
  operationId: 'getPhoneNumber',
  summary: 'Get a phone number.',
  scope: 'numbers:read',
  params: numberParams,
  responses: { 200: { description: 'PhoneNumber', schema: phoneNumberSchema }, 404: missing },
  async handler(ctx, { params }) {
    const number = await findPhoneNumberOr404(
      ctx.state.em,
      ctx.state.auth.workspaceId,
      params.phone_number_id,
    );
    return { status: 200, body: presentPhoneNumber(number, reachOf(ctx)) };
  },
});

const update = defineRoute({
  method: 'PATCH',
  path: '/phone-numbers/:phone_number_id',
  operationId: 'updatePhoneNumber',
  summary: 'Set the agent that answers the number (assign, reassign), or null to release it.',
  scope: 'numbers:write',
  params: numberParams,
  body: phoneNumberUpdateSchema,
  responses: { 200: { description: 'PhoneNumber', schema: phoneNumberSchema }, 404: missing },
  async handler(ctx, { params, body }) {
    const em = ctx.state.em;
    const workspaceId = ctx.state.auth.workspaceId;
    const number = await findPhoneNumberOr404(em, workspaceId, params.phone_number_id);
    const agentId = body.agent_id === null ? null : (await findAgentOr404(em, workspaceId, body.agent_id)).id;
    if (number.agent !== agentId) {
      number.agent = agentId;
      number.updatedAt = new Date();
      await em.flush();
    }
    return { status: 200, body: presentPhoneNumber(number, reachOf(ctx)) };
  },
});

export const phoneNumberRoutes: RouteDefinition[] = [list, get, update];
