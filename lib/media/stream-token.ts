import { createHmac } from 'node:crypto';
import { sameSecret } from '../same-secret.js';

// A call's own stream token (telephony spec section 3): the only thing that lets a Media Streams
// connection attach to a call the service placed. An HMAC-SHA256 of the call id and an expiry,
// made by the service when it dials (or answers with audio) and handed to the carrier, so the far
// end's stream proves it belongs to that call and no other, and only for a while: at most the ring
// timeout plus 60 s after the dial. The key is derived from MEDIA_CONTROL_TOKEN, which the workers,
// the API and the gateways hold and no stream client ever sees; the shared MEDIA_STREAMS_TOKEN
// opens new inbound streams only. Form: `cst1.<expiry, epoch seconds>.<signature, base64url>`.

const PREFIX = 'cst1';
/** What a stream may take after the dial's ring timeout to attach (the far end answers, its stream opens). */
export const STREAM_TOKEN_GRACE_SECONDS = 60;

/** The signing key for stream tokens, its own derivation of MEDIA_CONTROL_TOKEN (never the token itself). */
function keyOf(controlToken: string): Buffer {
  return createHmac('sha256', controlToken).update('media stream token v1').digest();
}

function signature(controlToken: string, callId: string, expiresAt: number): string {
  return createHmac('sha256', keyOf(controlToken)).update(`${callId}.${expiresAt}`).digest('base64url');
}

/** The token of call `callId`, valid until `ringTimeoutSeconds` + 60 s after `now` (epoch ms). */
export function streamTokenFor(
  controlToken: string,
  callId: string,
  ringTimeoutSeconds: number,
  now = Date.now(),
): string {
  const expiresAt = Math.floor(now / 1000) + ringTimeoutSeconds + STREAM_TOKEN_GRACE_SECONDS;
  return `${PREFIX}.${expiresAt}.${signature(controlToken, callId, expiresAt)}`;
}

/** A token of this shape that has not expired (the call it names is checked once `start` says it). */
export function looksLikeStreamToken(token: string, now = Date.now()): boolean {
  const expiresAt = expiryOf(token);
  return expiresAt !== null && expiresAt * 1000 > now;
}

/** Whether `token` is call `callId`'s own stream token and has not expired. */
export function streamTokenOpens(
  controlToken: string,
  token: string,
  callId: string,
  now = Date.now(),
): boolean {
  const expiresAt = expiryOf(token);
  if (expiresAt === null || expiresAt * 1000 <= now) return false;
  return sameSecret(token.slice(token.lastIndexOf('.') + 1), signature(controlToken, callId, expiresAt));
}

function expiryOf(token: string): number | null {
  const match = /^cst1\.(\d{1,12})\.[A-Za-z0-9_-]{43}$/.exec(token);
  return match ? Number(match[1]) : null;
}
