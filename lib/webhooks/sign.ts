import { createHmac } from 'node:crypto';

// How a delivery is signed. The key of both signatures is the endpoint secret exactly as
// issued, `whsec_` prefix included. The receiver side lives in verify-signature.ts.

export function hmacHex(secret: string, message: Buffer | string): string {
  return createHmac('sha256', secret).update(message).digest('hex');
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export function serviceSignature(secret: string, body: Buffer, unixSeconds: number): string {
  const signed = Buffer.concat([Buffer.from(`${unixSeconds}.`), body]);
  return `t=${unixSeconds},v1=${hmacHex(secret, signed)}`;
}

/** Legacy `X-Service-Signature`: `sha256=<hex HMAC-SHA256 of the body alone>`, same key, no timestamp. */
export function legacySignature(secret: string, body: Buffer): string {
  return `sha256=${hmacHex(secret, body)}`;
}

export const WEBHOOK_USER_AGENT = 'Service-Webhooks/1.0';

/** Every header of one delivery attempt, as the spec's table lists them. */
export function deliveryHeaders(input: {
  secret: string;
  body: Buffer;
  eventId: string;
  eventType: string;
  unixSeconds: number;
}): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'Service-Signature': serviceSignature(input.secret, input.body, input.unixSeconds),
    'Service-Event-Id': input.eventId,
    'Service-Event-Type': input.eventType,
    'User-Agent': WEBHOOK_USER_AGENT,
    'X-Service-Signature': legacySignature(input.secret, input.body),
  };
}
