import { randomUUID } from 'node:crypto';

/** The X-Request-Id of one response: `req_` and 32 hex digits. */
export function newRequestId(): string {
  return `req_${randomUUID().replaceAll('-', '')}`;
}
