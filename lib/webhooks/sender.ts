import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { forbiddenAddressReason } from './address-guard.js';

// One HTTP POST of a delivery. Redirects are never followed (a 3xx is a failed attempt), and
// unless private targets are allowed the address actually connected to must be public: the
// resolver refuses private answers and the socket is checked again once connected, so a DNS
// answer that changes between registration and delivery (rebinding) cannot reach inside.

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

class TargetRefused extends Error {}

/**
 * The attempt's error when the target is not a public address. The delivery log is the tenant's,
 * so it does not say what the name resolved to (a way to map internal DNS).
 */
export const TARGET_REFUSED = 'target refused: the address is not public';

const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true } as LookupAllOptions, (err, answers: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    for (const answer of answers) {
      if (forbiddenAddressReason(answer.address)) return callback(new TargetRefused(), '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, answers);
    const first = answers[0];
    if (!first) return callback(new Error(`${hostname} has no address`), '', 0);
    callback(null, first.address, first.family);
  });
};

export function sendWebhook(request: SendRequest): Promise<SendResult> {
  const timeoutMs = request.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const fail = (
      error: string,
      responseStatus: number | null = null,
      responseExcerpt: string | null = null,
    ) => finish({ delivered: false, responseStatus, error, responseExcerpt });

    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return fail('url is not valid');
    }
    const transport = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
    if (!transport) return fail(`scheme ${url.protocol} is not allowed`);
    if (!request.allowPrivate) {
      if (url.protocol !== 'https:') return fail('only https targets are allowed');
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) && forbiddenAddressReason(host)) return fail(TARGET_REFUSED);
    }

    const req = transport.request(url, {
      method: 'POST',
      headers: { ...request.headers, 'Content-Length': String(request.body.length) },
      agent: false,
      lookup: request.allowPrivate ? undefined : guardedLookup,
    });
    timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`));
    }, timeoutMs);

    if (!request.allowPrivate) {
      req.on('socket', (socket: Socket) => {
        socket.once('connect', () => {
          if (forbiddenAddressReason(socket.remoteAddress ?? '')) req.destroy(new TargetRefused());
        });
      });
    }
    req.on('error', (err) => fail(err instanceof TargetRefused ? TARGET_REFUSED : err.message));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const delivered = status >= 200 && status < 300;
      // The start of the answer is kept for the delivery log, a success's too; the rest is
      // drained unread, and the answer is judged once the start is in (or the body ended).
      let text = '';
      let judged = false;
      const judge = () => {
        if (judged) return;
        judged = true;
        const excerpt = text.slice(0, MAX_ERROR_BODY_CHARS).trim() || null;
        if (delivered)
          return finish({ delivered, responseStatus: status, error: null, responseExcerpt: excerpt });
        const location = status >= 300 && status < 400 ? res.headers.location : undefined;
        const detail = location ? `redirect to ${location} not followed` : (excerpt ?? '');
        fail(`HTTP ${status}${detail ? `: ${detail}` : ''}`, status, excerpt);
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (text.length < MAX_ERROR_BODY_CHARS) text += chunk;
        if (text.length >= MAX_ERROR_BODY_CHARS) judge();
      });
      res.on('error', (err) => (judged ? undefined : fail(err.message, status)));
      res.on('end', judge);
    });
    req.end(request.body);
  });
}
