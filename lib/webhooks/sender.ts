import { guardedPost } from './guarded-post.js';

// One HTTP POST of a delivery (lib/webhooks/guarded-post.ts: no redirect followed, public
// addresses only unless private targets are allowed), judged as the delivery log shows it.

export { TARGET_REFUSED } from './guarded-post.js';

export const DELIVERY_TIMEOUT_MS = 10_000;
/** Enough of the answer to show in the log; the rest is read and dropped. */
const MAX_ERROR_BODY_CHARS = 200;

export interface SendResult {
  /** Any 2xx. */
  delivered: boolean;
  responseStatus: number | null;
  error: string | null;
  /** The start of the answer's body (200 characters, trimmed), whatever its status; null without one. */
  responseExcerpt: string | null;
}

export interface SendRequest {
  url: string;
  body: Buffer;
  headers: Record<string, string>;
  allowPrivate: boolean;
  timeoutMs?: number;
}

export async function sendWebhook(request: SendRequest): Promise<SendResult> {
  const result = await guardedPost({
    ...request,
    timeoutMs: request.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    // The start of the answer is kept for the delivery log, a success's too; it is judged once
    // that is in (or the body ended).
    keepBodyBytes: MAX_ERROR_BODY_CHARS * 4,
    enoughBody: (start) => start.toString('utf8').length >= MAX_ERROR_BODY_CHARS,
  });
  if (!result.answered) {
    return { delivered: false, responseStatus: null, error: result.error, responseExcerpt: null };
  }
  const { status } = result;
  const delivered = status >= 200 && status < 300;
  const excerpt = result.body.toString('utf8').slice(0, MAX_ERROR_BODY_CHARS).trim() || null;
  if (delivered) return { delivered, responseStatus: status, error: null, responseExcerpt: excerpt };
  const location = status >= 300 && status < 400 ? result.headers.location : undefined;
  const detail = location ? `redirect to ${location} not followed` : (excerpt ?? '');
  return {
    delivered: false,
    responseStatus: status,
    error: `HTTP ${status}${detail ? `: ${detail}` : ''}`,
    responseExcerpt: excerpt,
  };
}
