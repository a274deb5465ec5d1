import { type SignatureCheck, type SignatureInput, verifySignatureHeader } from './webhook-signature.js';

// The tool endpoint's check of a request from the agent (agent-tools spec section 3):
//   Voice-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">
// keyed with the agent's tools secret as issued (`tsec_` included): the webhooks' scheme, so
// verifyWebhookSignature accepts it too; this one names Voice-Signature in its reasons.

export const TOOL_SIGNATURE_HEADER = 'Voice-Signature';

/**
 * Checks a tool request's `Voice-Signature` header against the raw request body (the bytes as
 * received) and the agent's tools secret; `t` must be within 300 seconds of your clock.
 */
export function verifyToolRequestSignature(input: SignatureInput): Promise<SignatureCheck> {
  return verifySignatureHeader(TOOL_SIGNATURE_HEADER, input);
}
