import assert from 'node:assert/strict';
import type { ApiResponse } from './api.js';

/** The spec's error `type` for each status (Errors: type ↔ status table). */
export function errorTypeOf(status: number): string {
  // 416 (a recording's byte range past its end) is a request the service cannot serve, like 422.
  if (status === 400 || status === 416 || status === 422) return 'invalid_request_error';
  if (status >= 500) return 'api_error';
  const types: Record<number, string> = {
    401: 'authentication_error',
    403: 'permission_error',
    404: 'not_found_error',
    409: 'idempotency_error',
    429: 'rate_limit_error',
  };
  const type = types[status];
  assert.ok(type, `no error type for status ${status}`);
  return type;
}

/**
 * The spec's error body with `code` and `param`, the `type` of its status class, and X-Request-Id
 * equal to its request_id.
 */
export function assertApiError(res: ApiResponse, status: number, code: string, param: string | null = null) {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status}: ${res.text}`);
  assert.deepEqual(Object.keys(res.body).sort(), ['error', 'request_id']);
  assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(res.body.error.code, code, res.text);
  assert.equal(res.body.error.type, errorTypeOf(status), res.text);
  assert.equal(res.body.error.param, param, res.text);
  assert.equal(typeof res.body.error.message, 'string');
  assert.ok(res.body.request_id);
  assert.equal(res.body.request_id, res.headers.get('x-request-id'));
}
