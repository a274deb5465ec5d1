import assert from 'node:assert/strict';
import type { ApiResponse } from './api.js';

/** The spec's error body with `code` and `param`, and X-Request-Id equal to its request_id. */
export function assertApiError(res: ApiResponse, status: number, code: string, param: string | null = null) {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status}: ${res.text}`);
  assert.deepEqual(Object.keys(res.body).sort(), ['error', 'request_id']);
  assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(res.body.error.code, code, res.text);
  assert.equal(res.body.error.param, param, res.text);
  assert.equal(typeof res.body.error.message, 'string');
  assert.ok(res.body.request_id);
  assert.equal(res.body.request_id, res.headers.get('x-request-id'));
}
