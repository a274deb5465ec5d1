import type { Context } from 'koa';
import { ApiError, bodyInvalid, bodyTooLarge, contentTypeInvalid, requestInvalid } from './errors.js';

// Reads a request body as UTF-8 text, refusing it once it passes the limit. 1 MiB holds a
// 50,000-character system prompt even when every character is sent as a 12-byte escaped
// surrogate pair (600 kB), with room for every other field.

export const BODY_LIMIT_BYTES = 1024 * 1024;

/** The raw body text; '' when none was sent. A non-empty body must be application/json. */
export async function readRawBody(ctx: Context, limit = BODY_LIMIT_BYTES): Promise<string> {
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limit) {
    // The client is told to stop; the socket closes after the answer instead of draining it.
    ctx.set('Connection', 'close');
    throw bodyTooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        ctx.set('Connection', 'close');
        throw bodyTooLarge(limit);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw requestInvalid('The request body could not be read.');
  }
  if (size === 0) return '';
  if (!isJsonContentType(ctx.get('Content-Type'))) throw contentTypeInvalid();
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks, size));
  } catch {
    throw bodyInvalid('The body is not valid UTF-8.');
  }
}

function isJsonContentType(header: string): boolean {
  const [type, ...params] = header.split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => !p.startsWith('charset=') || ['charset=utf-8', 'charset="utf-8"'].includes(p));
}

/** The body as a JSON object; `undefined` for an empty body. */
export function parseJsonObject(raw: string): Record<string, unknown> | undefined {
  if (raw.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw bodyInvalid('The body is not valid JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw bodyInvalid('The body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}
