// The receiver's check of a webhook delivery, as the spec's Signature section says:
//   Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>
//   signed message: `<t>.<raw body bytes>`; key: the endpoint secret as issued, `whsec_` included;
//   constant-time comparison; refuse a `t` more than 300 seconds from the receiver's clock.
// A tool request's Voice-Signature is the same scheme (tool-request-signature.ts).
// Web Crypto only (crypto.subtle), so it runs in Node 20+, browsers and edge runtimes alike.

export const SIGNATURE_TOLERANCE_SECONDS = 300;

export type SignatureCheck = { ok: true; timestamp: number } | { ok: false; reason: string };

export interface SignatureInput {
  rawBody: string | Uint8Array | ArrayBuffer;
  signatureHeader: string | null | undefined;
  secret: string;
  toleranceSeconds?: number;
  nowSeconds?: number;
}

const encoder = new TextEncoder();

/**
 * Checks a delivery's `Service-Signature` header against the raw request body (the bytes as
 * received, before any JSON parsing: a re-serialised body will not match) and the endpoint
 * secret. A header may carry several `v1=` values; one match is enough. During a secret rotation,
 * call it once per secret you still accept.
 */
export function verifyWebhookSignature(input: SignatureInput): Promise<SignatureCheck> {
  return verifySignatureHeader('Service-Signature', input);
}

/** The check of a `t=…,v1=…` header; `headerName` is only for the reasons it gives. */
export async function verifySignatureHeader(
  headerName: string,
  input: SignatureInput,
): Promise<SignatureCheck> {
  const header = input.signatureHeader;
  if (!header) return { ok: false, reason: `${headerName} header missing` };
  let timestamp: number | undefined;
  const candidates: Uint8Array<ArrayBuffer>[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && value && /^\d+$/.test(value)) timestamp = Number(value);
    if (key === 'v1' && value && /^[0-9a-fA-F]{64}$/.test(value)) candidates.push(fromHex(value));
  }
  if (timestamp === undefined) return { ok: false, reason: `no t= in ${headerName}` };
  if (candidates.length === 0) return { ok: false, reason: `no v1= in ${headerName}` };

  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = input.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS;
  if (Math.abs(now - timestamp) > tolerance) return { ok: false, reason: 'timestamp outside tolerance' };

  const body =
    typeof input.rawBody === 'string' ? encoder.encode(input.rawBody) : new Uint8Array(input.rawBody);
  const prefix = encoder.encode(`${timestamp}.`);
  const message = new Uint8Array(prefix.length + body.length);
  message.set(prefix, 0);
  message.set(body, prefix.length);
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(input.secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  // subtle.verify compares in constant time.
  for (const candidate of candidates) {
    if (await crypto.subtle.verify('HMAC', key, candidate, message)) return { ok: true, timestamp };
  }
  return { ok: false, reason: 'signature mismatch' };
}

function fromHex(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
