import { retryAfterMs } from '../llm/openai-client.js';
import { guardedPost } from '../webhooks/guarded-post.js';
import { toolRequestHeaders } from './tool-request-signature.js';

// One attempt of a tool request (agent-tools spec section 3): the signed POST to the tool's URL
// under the webhook URL rules, and what its answer means for the model and for a retry.

/** The largest answer the model is given; a larger one is refused, and only its start is kept. */
export const TOOL_RESULT_MAX_BYTES = 64 * 1024;
/** How much of a refusal's body the model is told. */
const REFUSAL_BODY_BYTES = 1024;
/** The longest `Retry-After` honoured; a longer one waits this long. */
export const TOOL_RETRY_AFTER_MAX_MS = 5_000;
export const TOOL_USER_AGENT = 'Voice-Agent-Tools/1.0';

export interface ToolRequest {
  url: string;
  toolCallId: string;
  callId: string;
  agentId: string | null;
  name: string;
  arguments: Record<string, unknown>;
  metadata: Record<string, string>;
  attempt: number;
  /** The agent's tools secret: the request is signed with it; none, no signature. */
  secret: string | null;
  timeoutMs: number;
  allowPrivate: boolean;
  /** Unix seconds of the signature (now, unless a test fixes it). */
  unixSeconds?: number;
}

export type ToolAttemptOutcome =
  /** The answer is final: the model is given `result`. */
  | { final: true; status: 'succeeded' | 'refused'; responseStatus: number | null; result: string }
  /** A passing failure (408, 429, 5xx, a timeout, no connection): worth another attempt. */
  | { final: false; responseStatus: number | null; error: string; retryAfterMs?: number };

/** The request's body exactly as it is signed and sent. */
export function toolRequestBody(request: ToolRequest): Buffer {
  return Buffer.from(
    JSON.stringify({
      object: 'tool_call',
      id: request.toolCallId,
      call_id: request.callId,
      agent_id: request.agentId,
      name: request.name,
      arguments: request.arguments,
      metadata: request.metadata,
      attempt: request.attempt,
    }),
  );
}

const refusal = (status: number | null, body: string) =>
  JSON.stringify({ error: 'tool_refused', status, body });

/** Sends one attempt and says what its answer means. */
export async function sendToolRequest(request: ToolRequest): Promise<ToolAttemptOutcome> {
  const body = toolRequestBody(request);
  const answer = await guardedPost({
    url: request.url,
    body,
    headers: {
      ...toolRequestHeaders({
        secret: request.secret,
        body,
        toolCallId: request.toolCallId,
        unixSeconds: request.unixSeconds ?? Math.floor(Date.now() / 1000),
      }),
      'User-Agent': TOOL_USER_AGENT,
    },
    allowPrivate: request.allowPrivate,
    timeoutMs: request.timeoutMs,
    keepBodyBytes: TOOL_RESULT_MAX_BYTES,
  });
  if (!answer.answered) {
    // A target that is not public is refused before anything is sent: no retry makes it public.
    if (answer.targetRefused)
      return { final: true, status: 'refused', responseStatus: null, result: refusal(null, answer.error) };
    return { final: false, responseStatus: null, error: answer.error };
  }
  const { status } = answer;
  const text = answer.body.toString('utf8');
  if (status >= 200 && status < 300) {
    if (answer.bodyOverLimit) {
      // Refused to the model, and only the start is stored.
      return {
        final: true,
        status: 'refused',
        responseStatus: status,
        result: refusal(status, startOf(answer.body)),
      };
    }
    return { final: true, status: 'succeeded', responseStatus: status, result: text };
  }
  if (status === 408 || status === 429 || status >= 500) {
    const { headers } = answer;
    const wait = retryAfterMs(
      { get: (name) => [headers[name] ?? []].flat()[0] ?? null },
      TOOL_RETRY_AFTER_MAX_MS,
    );
    return {
      final: false,
      responseStatus: status,
      error: `HTTP ${status}`,
      ...(wait !== undefined ? { retryAfterMs: wait } : {}),
    };
  }
  // Any other answer (a 4xx, a redirect, which is never followed) is the tool's refusal.
  return {
    final: true,
    status: 'refused',
    responseStatus: status,
    result: refusal(status, startOf(answer.body)),
  };
}

/** The first KiB of a body as text (a character cut in two at the end is dropped). */
function startOf(body: Buffer): string {
  return body
    .subarray(0, REFUSAL_BODY_BYTES)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
}
