import { serviceSignature } from '../webhooks/sign.js';

// How a tool request is signed (agent-tools spec section 3): the webhooks' scheme under another
// header name, keyed with the agent's tools secret as issued (`tsec_` included). Receivers check it
// with the typed client's verifyToolRequestSignature (or verifyWebhookSignature: same scheme).

export const TOOL_SIGNATURE_HEADER = 'Voice-Signature';

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export function toolRequestSignature(secret: string, body: Buffer, unixSeconds: number): string {
  return serviceSignature(secret, body, unixSeconds);
}

/**
 * Every header of one attempt of a tool call. The tool call id is the Idempotency-Key, the same on
 * every attempt; without a secret (none made yet) the request carries no signature.
 */
export function toolRequestHeaders(input: {
  secret: string | null;
  body: Buffer;
  toolCallId: string;
  unixSeconds: number;
}): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'Idempotency-Key': input.toolCallId,
  };
  if (input.secret) {
    headers[TOOL_SIGNATURE_HEADER] = toolRequestSignature(input.secret, input.body, input.unixSeconds);
  }
  return headers;
}
