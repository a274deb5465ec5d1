import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Context } from 'koa';
import { bodyInvalid, bodyTooLarge, contentTypeInvalid, requestInvalid } from './errors.js';

// Reads a request body as UTF-8 text, refusing it once it passes the limit. 1 MiB holds a
// 50,000-character system prompt even when every character is sent as a 12-byte escaped
// surrogate pair (600 kB), with room for every other field.

export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * After a body_too_large answer the rest of the body is read and thrown away ("lingering close")
 * for at most this many bytes and this long, then the connection is closed. Closing while the
 * client still writes would reset the connection, and clients (Node's fetch and http.request
 * among them) then report ECONNRESET or EPIPE instead of the answer.
 */
export const LINGER_MAX_BYTES = 10 * BODY_LIMIT_BYTES;
export const LINGER_MAX_MS = 5_000;

/** The raw body text; '' when none was sent. A non-empty body must be application/json. */
export async function readRawBody(ctx: Context, limit = BODY_LIMIT_BYTES): Promise<string> {
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limit) refuseTooLarge(ctx, limit);
  const body = await readUpTo(ctx.req, limit);
  if (body === 'too large') refuseTooLarge(ctx, limit);
  if (body.length === 0) return '';
  if (!isJsonContentType(ctx.get('Content-Type'))) throw contentTypeInvalid();
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw bodyInvalid('The body is not valid UTF-8.');
  }
}

/**
 * The whole body, or 'too large' as soon as it passes `limit`; the stream is then left flowing
 * (never destroyed, which would cut the connection before the answer).
 */
function readUpTo(req: IncomingMessage, limit: number): Promise<Buffer | 'too large'> {
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        done();
        chunks.length = 0;
        resolve('too large');
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = () => {
      done();
      reject(requestInvalid('The request body could not be read.'));
    };
    // The client went away before the body ended.
    const onClose = () => {
      if (req.readableEnded) return;
      onError();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * Answers 400 body_too_large with `Connection: close`, and discards the rest of the body while
 * the answer goes out. The connection closes cleanly once the body has ended. A body that goes on
 * past LINGER_MAX_BYTES more is no longer read: the client's writes stall while it reads the
 * answer (ordinary clients then close the connection themselves). Whatever is still open
 * LINGER_MAX_MS after the refusal is cut. Nothing is kept, so memory stays flat however much a
 * client sends.
 */
function refuseTooLarge(ctx: Context, limit: number): never {
  ctx.set('Connection', 'close');
  lingerThenClose(ctx.req);
  throw bodyTooLarge(limit);
}

function lingerThenClose(req: IncomingMessage): void {
  const socket = req.socket as Socket & { destroySoon?: () => void };
  // Nothing left to read (the chunk that crossed the limit was the last): Node closes as usual.
  if (!socket || socket.destroyed || req.readableEnded) return;
  let discarded = 0;
  let answered = false;
  const cut = () => {
    req.off('data', discard);
    if (!socket.destroyed) socket.destroy();
  };
  const deadline = setTimeout(cut, LINGER_MAX_MS);
  deadline.unref();
  socket.once('close', () => clearTimeout(deadline));
  // Node closes a `Connection: close` socket with destroySoon() once the answer is written. On
  // this one socket that waits until the body has been read (or the deadline).
  const destroySoon = socket.destroySoon?.bind(socket) ?? (() => socket.end());
  const closeGracefully = () => {
    clearTimeout(deadline);
    destroySoon();
  };
  socket.destroySoon = () => {
    answered = true;
    if (req.readableEnded) closeGracefully();
  };
  const discard = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded <= LINGER_MAX_BYTES) return;
    // Enough read: stop reading (TCP holds the client back) and let the deadline close it.
    req.off('data', discard);
    req.pause();
  };
  req.on('data', discard);
  req.once('end', () => {
    if (answered) closeGracefully();
  });
  req.on('error', () => {}); // a client that gives up mid-body is expected here
  req.resume();
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
