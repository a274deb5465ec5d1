import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as errors from '../api/http/errors.js';
import { ApiError } from '../api/http/errors.js';
import { errorTypeOf } from './support/assert-api.js';

// The spec's error code table, letter by letter: each code has its constructor, with the spec's
// status and the type of that status class. Behaviour over HTTP is tested per endpoint; this
// catches a code whose constructor drifted from the table.

const SPEC_CODES: Record<string, number> = {
  parameter_missing: 400,
  parameter_invalid: 400,
  parameter_unknown: 400,
  body_invalid: 400,
  body_empty: 400,
  body_too_large: 400,
  content_type_invalid: 400,
  request_invalid: 400,
  api_key_missing: 401,
  api_key_invalid: 401,
  missing_scope: 403,
  role_required: 403,
  resource_missing: 404,
  route_not_found: 404,
  idempotency_key_reused: 409,
  idempotency_request_in_progress: 409,
  agent_not_published: 422,
  agent_not_ready: 422,
  agent_has_no_number: 422,
  from_number_required: 422,
  from_number_not_assigned: 422,
  emergency_number: 422,
  // telephony-v1 section 1.
  destination_not_allowed: 422,
  call_rejected: 422,
  rate_limited: 429,
  call_rate_limited: 429,
  call_daily_limit: 429,
  quota_exceeded: 429,
  internal_error: 500,
  upstream_error: 502,
  upstream_unavailable: 503,
  auth_unavailable: 503,
  call_outcome_unknown: 503,
};

/** Every ApiError the module's constructors make (arguments are placeholders). */
function constructed(): ApiError[] {
  return Object.entries(errors)
    .filter(([name, value]) => typeof value === 'function' && value !== ApiError && name !== 'unprocessable')
    .map(([name, make]) => {
      const error = (make as (...args: unknown[]) => unknown)('field', 'message');
      assert.ok(error instanceof ApiError, `${name} makes an ApiError`);
      return error;
    });
}

test('every code of the spec has a constructor with the spec’s status and its type', () => {
  const byCode = new Map(constructed().map((e) => [e.code, e]));
  for (const [code, status] of Object.entries(SPEC_CODES)) {
    const error = byCode.get(code);
    assert.ok(error, `no constructor for ${code}`);
    assert.equal(error.status, status, code);
    assert.equal(error.type, errorTypeOf(status), code);
  }
});

test('every constructor, spec code or added one, has the type of its status class', () => {
  // The spec allows new codes; an unknown code is read by its type, so the type must be right.
  for (const error of constructed()) assert.equal(error.type, errorTypeOf(error.status), error.code);
});

// Changeable refusals: the trial line (call_rejected), the deployment's language model (llm_required).
test('what a stored idempotent answer may be: 4xx but 429 and changeable refusals; of 5xx only call_outcome_unknown', () => {
  for (const error of constructed()) {
    const expected =
      error.code === 'call_outcome_unknown' ||
      (error.status < 500 &&
        error.status !== 429 &&
        ![
          'call_rejected',
          'llm_required',
          'idempotency_key_reused',
          'idempotency_request_in_progress',
        ].includes(error.code));
    assert.equal(error.storable, expected, error.code);
  }
});

test('429s carry Retry-After in whole seconds, at least 1', () => {
  for (const make of [
    errors.rateLimited,
    errors.callRateLimited,
    errors.callDailyLimit,
    errors.quotaExceeded,
  ]) {
    assert.equal(make(0.2).headers['Retry-After'], '1');
    assert.equal(make(2.1).headers['Retry-After'], '3');
  }
});
