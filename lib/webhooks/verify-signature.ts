import { createHmac, timingSafeEqual } from 'node:crypto';

// A receiver's check of a delivery, self-contained (node:crypto only) so it can be copied
// into a receiver as it is. docs/webhooks.md shows it; the end-to-end tests use it.

export const SIGNATURE_TOLERANCE_SECONDS = 300;

export type SignatureCheck = { ok: true; timestamp: number } | { ok: false; reason: string };

/**
 * Checks the `Service-Signature` header against the raw request body (the bytes as received,
 * before any JSON parsing) and the endpoint secret (`whsec_…`, used whole as the HMAC key).
 */
export function verifyWebhookSignature(input: {
  rawBody: Buffer | string;
  signatureHeader: string | undefined;
  secret: string;
  toleranceSeconds?: number;
  nowSeconds?: number;
}): SignatureCheck {
  const header = input.signatureHeader;
  if (!header) return { ok: false, reason: 'Service-Signature header missing' };
  let timestamp: number | undefined;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && value && /^\d+$/.test(value)) timestamp = Number(value);
    if (key === 'v1' && value) candidates.push(value);
  }
  if (timestamp === undefined) return { ok: false, reason: 'no t= in Service-Signature' };
  if (candidates.length === 0) return { ok: false, reason: 'no v1= in Service-Signature' };

  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = input.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS;
  if (Math.abs(now - timestamp) > tolerance) return { ok: false, reason: 'timestamp outside tolerance' };

  const body = typeof input.rawBody === 'string' ? Buffer.from(input.rawBody, 'utf8') : input.rawBody;
  const expected = createHmac('sha256', input.secret)
    .update(Buffer.concat([Buffer.from(`${timestamp}.`), body]))
    .digest();
  // Constant-time comparison; a header may carry several v1 values (e.g. during a rotation).
  for (const candidate of candidates) {
    const given = Buffer.from(candidate, 'hex');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true, timestamp };
  }
  return { ok: false, reason: 'signature mismatch' };
}
