import { IDEMPOTENCY_HEADER, MAX_KEY_LENGTH } from '../middleware/idempotency.js';
import { ERROR_TYPES } from './errors.js';
import { BODY_LIMIT_BYTES } from './request-body.js';
import type { HeaderDescription, JsonSchema, OpenApiLink, RouteDefinition } from './route.js';
import { withStorableText } from './storable-text.js';

// The OpenAPI 3.1 document served at /v1/openapi.json, generated from the same route definitions
// and JSON Schemas the router validates with, so the two cannot drift apart.

export const errorSchema = {
  type: 'object',
  required: ['error', 'request_id'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['type', 'code', 'message', 'param'],
      additionalProperties: false,
      properties: {
        type: { enum: [...ERROR_TYPES] },
        code: { type: 'string' },
        message: { type: 'string' },
        param: { type: ['string', 'null'] },
      },
    },
    request_id: { type: 'string' },
  },
};

const COMMON_ERRORS: Record<number, string> = {
  400: 'Malformed request: parameter_missing, parameter_invalid, parameter_unknown, body_invalid, body_empty, body_too_large, content_type_invalid.',
  401: 'api_key_missing or api_key_invalid.',
  429: 'rate_limited; wait Retry-After seconds.',
  500: 'internal_error.',
  503: 'auth_unavailable: the key could not be checked now; upstream_unavailable: the database or Temporal did not answer. Retry after Retry-After seconds.',
};

/** Statuses that come with a Retry-After header, and whether every answer of that status has it. */
const RETRY_AFTER: Record<number, boolean> = { 429: true, 503: false };

const REQUEST_ID_HEADER = {
  required: true,
  description: 'The id of this request (an error body has it as request_id); quote it when asking for help.',
  schema: { type: 'string', pattern: '^req_[0-9a-f]{32}$' },
};
const REPLAYED_HEADER = {
  required: false,
  description: 'true when this is the stored answer to an earlier request with the same Idempotency-Key.',
  schema: { const: 'true' },
};

/** `/agents/:agent_id` → `/agents/{agent_id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export function openApiDocument(routes: RouteDefinition[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Voice Agent Service API',
      version: 'v1',
      description: `Bodies are JSON objects of at most ${BODY_LIMIT_BYTES} bytes. Every response carries X-Request-Id.`,
    },
    servers: [{ url: '/v1' }],
    security: [{ bearerAuth: [] }],
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'svc_live_… API key' } },
      schemas: { Error: errorSchema },
    },
    paths,
  };
}

function operation(route: RouteDefinition) {
  const parameters = [
    ...schemaParameters(route.params, 'path'),
    ...schemaParameters(route.query, 'query'),
    ...Object.entries(route.requestHeaders ?? {}).map(([name, header]) => ({
      name,
      in: 'header',
      required: header.required ?? false,
      description: header.description,
      schema: header.schema,
    })),
    ...(route.idempotent
      ? [
          {
            name: IDEMPOTENCY_HEADER,
            in: 'header',
            required: false,
            schema: { type: 'string', minLength: 1, maxLength: MAX_KEY_LENGTH },
            description: 'Makes a retry of this request safe for 24 hours.',
          },
        ]
      : []),
  ];
  const responses: Record<string, unknown> = {};
  // Statuses the platform itself can answer for this route; a route's own entries override them.
  const errors: Record<number, string> = { ...COMMON_ERRORS };
  if (route.scope || route.roles) errors[403] = 'missing_scope or role_required.';
  if (route.params) errors[404] = 'resource_missing: no such resource in the workspace.';
  if (route.idempotent) errors[409] = 'idempotency_key_reused or idempotency_request_in_progress.';
  const headersOf = (status: number, own: Record<string, HeaderDescription> = {}) => ({
    headers: {
      'X-Request-Id': REQUEST_ID_HEADER,
      ...own,
      ...retryAfterHeader(status),
      ...(route.idempotent ? { 'Idempotent-Replayed': REPLAYED_HEADER } : {}),
    },
  });
  for (const [status, description] of Object.entries(errors)) {
    responses[status] = {
      description,
      ...headersOf(Number(status)),
      content: { 'application/json': { schema: ERROR_REF } },
    };
  }
  for (const [status, response] of Object.entries(route.responses)) {
    const schema = response.schema ?? (Number(status) >= 400 ? ERROR_REF : undefined);
    const mediaType = response.mediaType ?? 'application/json';
    responses[status] = {
      description: response.description,
      ...headersOf(Number(status), response.headers),
      ...(schema ? { content: { [mediaType]: { schema } } } : {}),
      ...(response.links ? { links: openApiLinks(response.links) } : {}),
    };
  }
  // A body schema that requires nothing may be left out altogether (POST …/test); a PATCH needs
  // at least one field.
  const body = route.body ? withStorableText(route.body) : undefined;
  const bodyRequired =
    route.method === 'PATCH' || ((body?.required as string[] | undefined)?.length ?? 0) > 0;
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.scope ? { 'x-required-scope': route.scope } : {}),
    ...(route.roles ? { 'x-required-roles': route.roles } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(body
      ? { requestBody: { required: bodyRequired, content: { 'application/json': { schema: body } } } }
      : {}),
    responses,
  };
}

const ERROR_REF = { $ref: '#/components/schemas/Error' };

function retryAfterHeader(status: number) {
  if (!(status in RETRY_AFTER)) return {};
  const header = {
    required: RETRY_AFTER[status],
    description: 'Seconds to wait before retrying.',
    schema: { type: 'string', pattern: '^[1-9][0-9]*$' },
  };
  return { 'Retry-After': header };
}

function openApiLinks(links: Record<string, OpenApiLink>) {
  return Object.fromEntries(
    Object.entries(links).map(([name, link]) => [
      name,
      {
        operationId: link.operationId,
        parameters: link.parameters,
        ...(link.description ? { description: link.description } : {}),
      },
    ]),
  );
}

function schemaParameters(source: JsonSchema | undefined, location: 'path' | 'query') {
  const schema = source ? withStorableText(source) : undefined;
  const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema?.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || required.has(name),
    schema: property,
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
  }));
}
