import type { listQuerySchema } from '../api/http/pagination.js';
import { type BodyOf, defineRoute, type QueryOf } from '../api/http/route.js';
import type { agentUpdateSchema } from '../api/schemas/agent.js';
import { callCreateSchema, type callListFilters } from '../api/schemas/call.js';
import { uuidParams } from '../api/schemas/common.js';
import type { AgentUpdate } from '../clients/typescript/src/index.js';

// Type-level checks, not run: `npm run lint` (tsc) fails when a handler's input type drifts from
// its route's JSON Schemas. Each `@ts-expect-error` must meet an error, so each of those lines is
// a case that has to keep failing to compile.

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<_Check extends true>(): void {}

// A body is exactly the schema's fields, required as the schema says; body defaults are not
// applied by the router, so a defaulted field (`ring_timeout_seconds`) stays optional.
assertType<
  Equal<
    BodyOf<typeof callCreateSchema>,
    {
      agent_id: string;
      to: string;
      from?: string;
      metadata?: { [key: string]: string };
      ring_timeout_seconds?: number;
      first_message?: string;
    }
  >
>();

// A PATCH body: every field optional, the nullable ones null too; the handler sees what the typed
// client (generated from the OpenAPI document) sends.
assertType<Equal<BodyOf<typeof agentUpdateSchema>, AgentUpdate>>();

// A query gets its defaults (`limit`), coerced to the schema's types; enums are their values.
assertType<
  Equal<
    QueryOf<ReturnType<typeof listQuerySchema<typeof callListFilters>>>,
    {
      limit: number;
      cursor?: string;
      agent_id?: string;
      direction?: 'inbound' | 'outbound';
      created_after?: string;
      created_before?: string;
    }
  >
>();

defineRoute({
  method: 'POST',
  path: '/calls/:call_id/check',
  operationId: 'routeInputTypes',
  summary: 'Never registered: the handler below is only compiled.',
  scope: null,
  params: uuidParams('call_id'),
  body: callCreateSchema,
  responses: {},
  async handler(_ctx, { params, query, body }) {
    const callId: string = params.call_id;
    const to: string = body.to;
    // @ts-expect-error the schema has no such field
    body.nickname;
    // @ts-expect-error optional in the schema, so possibly undefined
    const from: string = body.from;
    // @ts-expect-error an enum-less integer is a number, not a string
    const seconds: string | undefined = body.ring_timeout_seconds;
    // @ts-expect-error a route without a query schema has no query fields
    query.limit;
    // @ts-expect-error no such path parameter
    params.agent_id;
    return { status: 200, body: { callId, to, from, seconds } };
  },
});
