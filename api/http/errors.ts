// Every refusal the API gives is an ApiError; api/middleware/errors.ts renders it as the spec's
// error body. Constructors exist for every code of the spec so the wording stays in one place.

import { isStorableStatus } from '../middleware/outcome.js';

/** Every error `type` of the spec; the OpenAPI Error schema lists these. */
export const ERROR_TYPES = [
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'idempotency_error',
  'rate_limit_error',
  'api_error',
] as const;

export type ErrorType = (typeof ERROR_TYPES)[number];

export interface ApiErrorOptions {
  /** The field or parameter at fault (`name`, `metadata.foo`, `events[1]`, `limit`, `Idempotency-Key`). */
  param?: string | null;
  /** Extra response headers, e.g. `Retry-After`. */
  headers?: Record<string, string>;
  /**
   * Whether an idempotent request may store this refusal and replay it. Default: 4xx other than
   * 429 are stored; 429 and 5xx are not. Refusals whose reason can change pass `false`.
   */
  storable?: boolean;
}

export class ApiError extends Error {
  readonly param: string | null;
  readonly headers: Record<string, string>;
  readonly storable: boolean;

  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
    this.storable = options.storable ?? isStorableStatus(status);
  }

  /** The spec's error body. */
  toBody(requestId: string) {
    return {
      error: { type: this.type, code: this.code, message: this.message, param: this.param },
      request_id: requestId,
    };
  }
}

const invalid = (code: string, message: string, param?: string | null, status = 400) =>
  new ApiError(status, 'invalid_request_error', code, message, { param });

// 400: the request is malformed.
export const parameterMissing = (param: string, message = `${param} is required.`) =>
  invalid('parameter_missing', message, param);
export const parameterInvalid = (param: string, message: string) =>
  invalid('parameter_invalid', message, param);
export const parameterUnknown = (param: string, message = `${param} is not a parameter of this endpoint.`) =>
  invalid('parameter_unknown', message, param);
export const bodyInvalid = (message = 'The body must be a JSON object.') => invalid('body_invalid', message);
export const bodyEmpty = () => invalid('body_empty', 'The body has nothing to change.');
export const bodyTooLarge = (limitBytes: number) =>
  invalid('body_too_large', `The body is larger than ${limitBytes} bytes.`);
export const contentTypeInvalid = () =>
  invalid('content_type_invalid', 'The body must be sent with Content-Type: application/json.');
export const requestInvalid = (message = 'The request could not be read.') =>
  invalid('request_invalid', message);

// 422: valid, but impossible in the current state.
export const unprocessable = (code: string, message: string, options: ApiErrorOptions = {}) =>
  new ApiError(422, 'invalid_request_error', code, message, options);
export const agentNotPublished = (param: string | null = 'agent_id') =>
  unprocessable('agent_not_published', 'The agent must be published to place calls.', { param });
export const agentNotReady = (message: string, param: string | null = null) =>
  unprocessable('agent_not_ready', message, { param });
/** The deployment's speech cannot hear (and speak) the agent's language: it names the languages it can. */
export const languageNotSupported = (language: string, served: string) =>
  unprocessable(
    'language_not_supported',
    `This deployment's speech does not hear ${language}; it hears ${served}.`,
    { param: 'language' },
  );
export const agentHasNoNumber = () =>
  unprocessable('agent_has_no_number', 'The agent has no phone number to call from.', { param: 'agent_id' });
export const fromNumberRequired = () =>
  unprocessable('from_number_required', 'The agent has several numbers; from is required.', {
    param: 'from',
  });
export const fromNumberNotAssigned = () =>
  unprocessable('from_number_not_assigned', 'from is not one of the agent’s numbers.', { param: 'from' });
export const emergencyNumber = (param = 'to') =>
  unprocessable('emergency_number', 'Emergency numbers can never be called.', { param });
/** A number the dialing rules refuse: high-cost, outside the workspace's dialing countries, or the call's own. */
export const destinationNotAllowed = (message: string, param = 'to') =>
  unprocessable('destination_not_allowed', message, { param });
/** A campaign move its state does not allow (resume a running campaign, add to a canceled one). */
export const campaignStateInvalid = (message: string) =>
  unprocessable('campaign_state_invalid', message, { param: null });
export const campaignRecipientLimit = (limit: number) =>
  unprocessable('campaign_recipient_limit', `A campaign has at most ${limit} recipients.`, {
    param: 'recipients',
  });
/** A test run needs a language model to play its callers; the deployment has none (can change: not stored). */
export const llmRequired = () =>
  unprocessable(
    'llm_required',
    'Test runs need a language model to play the callers: set VOICE_LLM_URL (or ANALYSIS_LLM_URL).',
    { param: null, storable: false },
  );
/** A test run move its state does not allow (cancel a finished run). */
export const testRunStateInvalid = (message: string) =>
  unprocessable('test_run_state_invalid', message, { param: null });
/** A refusal whose reason can change (e.g. the trial line is busy): never stored for replay. */
export const callRejected = (message: string) => unprocessable('call_rejected', message, { storable: false });

// 401 / 403
export const apiKeyMissing = () =>
  new ApiError(
    401,
    'authentication_error',
    'api_key_missing',
    'No API key: send it as Authorization: Bearer <API_KEY>.',
  );
export const apiKeyInvalid = () =>
  new ApiError(401, 'authentication_error', 'api_key_invalid', 'The API key is wrong, expired or revoked.');
export const sessionMissing = () =>
  new ApiError(
    401,
    'authentication_error',
    'session_missing',
    'Not signed in, or the session ended: sign in to the dashboard again.',
  );
export const signInFailed = () =>
  new ApiError(401, 'authentication_error', 'sign_in_failed', 'The email or the password is wrong.', {
    param: 'password',
  });
export const csrfTokenInvalid = () =>
  new ApiError(
    403,
    'permission_error',
    'csrf_token_invalid',
    'A dashboard change needs the session’s X-CSRF-Token header; reload the page.',
    { param: 'X-CSRF-Token' },
  );
export const workspaceNotSelected = () =>
  new ApiError(403, 'permission_error', 'workspace_not_selected', 'Pick a workspace first.', {
    param: 'workspace_id',
  });
export const missingScope = (scope: string) =>
  new ApiError(403, 'permission_error', 'missing_scope', `This API key lacks the scope ${scope}.`);
export const roleRequired = (message: string) =>
  new ApiError(403, 'permission_error', 'role_required', message);

// 404
export const resourceMissing = (resource: string, param: string | null = null) =>
  new ApiError(404, 'not_found_error', 'resource_missing', `No such ${resource} in this workspace.`, {
    param,
  });
export const routeNotFound = (method: string, path: string) =>
  new ApiError(404, 'not_found_error', 'route_not_found', `No endpoint ${method} ${path}.`);

// 409
export const idempotencyKeyReused = () =>
  new ApiError(
    409,
    'idempotency_error',
    'idempotency_key_reused',
    'This Idempotency-Key was used with a different request; use a new key.',
    { param: 'Idempotency-Key', storable: false },
  );
export const idempotencyRequestInProgress = () =>
  new ApiError(
    409,
    'idempotency_error',
    'idempotency_request_in_progress',
    'A request with this Idempotency-Key is still running; retry after it finishes.',
    { param: 'Idempotency-Key', storable: false },
  );

// 429: never stored; the client waits Retry-After seconds.
const tooMany = (code: string, message: string, retryAfterSeconds: number) =>
  new ApiError(429, 'rate_limit_error', code, message, {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });
export const rateLimited = (retryAfterSeconds: number) =>
  tooMany('rate_limited', 'Too many requests for this API key.', retryAfterSeconds);
export const signInRateLimited = (retryAfterSeconds: number) =>
  tooMany('rate_limited', 'Too many sign-in attempts; wait before trying again.', retryAfterSeconds);
export const inviteRateLimited = (retryAfterSeconds: number) =>
  tooMany(
    'rate_limited',
    'Too many invite attempts from this address; wait before trying again.',
    retryAfterSeconds,
  );
/** The dashboard's live call view: a session holds a few open streams at once. */
export const tooManyLiveViews = () =>
  tooMany('rate_limited', 'Too many live call views are open in this session; close one first.', 5);
export const callRateLimited = (retryAfterSeconds: number) =>
  tooMany('call_rate_limited', 'Too many outbound calls in the last minute.', retryAfterSeconds);
export const callDailyLimit = (retryAfterSeconds: number) =>
  tooMany('call_daily_limit', 'The daily outbound call limit is reached.', retryAfterSeconds);
export const quotaExceeded = (retryAfterSeconds: number) =>
  tooMany('quota_exceeded', 'The plan’s call minutes are used up.', retryAfterSeconds);

// 5xx: never stored, except call_outcome_unknown (the same key must never dial twice).
export const internalError = () =>
  new ApiError(500, 'api_error', 'internal_error', 'Something went wrong on our side; retry with backoff.');
export const upstreamError = (message = 'An internal service answered with an error.') =>
  new ApiError(502, 'api_error', 'upstream_error', message);
/** Seconds a client is told to wait after a 503 for a dependency that did not answer. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;
const retryShortly = { headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) } };
export const upstreamUnavailable = (message = 'An internal service did not answer in time.') =>
  new ApiError(503, 'api_error', 'upstream_unavailable', message, retryShortly);
export const databaseUnavailable = () =>
  upstreamUnavailable('The database did not answer; retry shortly (a POST with the same Idempotency-Key).');
export const authUnavailable = () =>
  new ApiError(
    503,
    'api_error',
    'auth_unavailable',
    'The API key could not be checked right now; retry shortly.',
    retryShortly,
  );
export const callOutcomeUnknown = () =>
  new ApiError(
    503,
    'api_error',
    'call_outcome_unknown',
    'The call start could not be confirmed; it may be ringing. Look for it with GET /calls before retrying with a new Idempotency-Key.',
    { storable: true },
  );
