import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { forbiddenAddressReason } from './address-guard.js';

// One HTTP POST to an integrator's URL (a webhook delivery, an agent's tool request). Redirects
// are never followed, and unless private targets are allowed the address actually connected to
// must be public: the resolver refuses private answers and the socket is checked again once
// connected, so a DNS answer that changes between registration and the request (rebinding)
// cannot reach inside.

export interface GuardedPostRequest {
  url: string;
  body: Buffer;
  headers: Record<string, string>;
  allowPrivate: boolean;
  timeoutMs: number;
  /**
   * How much of the answer's body to keep. The answer is over once that much is in (the rest is
   * dropped unread) or the body has ended; `bodyOverLimit` says which.
   */
  keepBodyBytes: number;
  /** The answer is judged as soon as this says the start of the body is enough (the rest is not read). */
  enoughBody?: (start: Buffer) => boolean;
}

export type GuardedPostResult =
  | {
      answered: true;
      status: number;
      headers: http.IncomingHttpHeaders;
      /** The start of the body, at most `keepBodyBytes`. */
      body: Buffer;
      /** The body was longer than `keepBodyBytes`. */
      bodyOverLimit: boolean;
    }
  | {
      answered: false;
      /** What went wrong: a refused target, a timeout, a connection failure. */
      error: string;
      /** The target is not a public address (or not https): no request went out. */
      targetRefused: boolean;
      timedOut: boolean;
    };

class TargetRefused extends Error {}

/**
 * The error when the target is not a public address. The integrator sees it, so it does not say
 * what the name resolved to (a way to map internal DNS).
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

export function guardedPost(request: GuardedPostRequest): Promise<GuardedPostResult> {
  const { timeoutMs } = request;
  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: GuardedPostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const fail = (error: string, targetRefused = false) =>
      finish({ answered: false, error, targetRefused, timedOut });

    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return fail('url is not valid');
    }
    const transport = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
    if (!transport) return fail(`scheme ${url.protocol} is not allowed`, true);
    if (!request.allowPrivate) {
      if (url.protocol !== 'https:') return fail('only https targets are allowed', true);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) && forbiddenAddressReason(host)) return fail(TARGET_REFUSED, true);
    }

    const req = transport.request(url, {
      method: 'POST',
      headers: { ...request.headers, 'Content-Length': String(request.body.length) },
      agent: false,
      lookup: request.allowPrivate ? undefined : guardedLookup,
    });
    timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`));
    }, timeoutMs);

    if (!request.allowPrivate) {
      req.on('socket', (socket: Socket) => {
        socket.once('connect', () => {
          if (forbiddenAddressReason(socket.remoteAddress ?? '')) req.destroy(new TargetRefused());
        });
      });
    }
    req.on('error', (err) => (err instanceof TargetRefused ? fail(TARGET_REFUSED, true) : fail(err.message)));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let kept = 0;
      const judge = (bodyOverLimit: boolean) => {
        const body = Buffer.concat(chunks).subarray(0, request.keepBodyBytes);
        finish({ answered: true, status, headers: res.headers, body, bodyOverLimit });
        // What is left of the answer is not read: the socket goes (agent: false, one per request).
        res.destroy();
      };
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        chunks.push(chunk);
        kept += chunk.length;
        if (kept > request.keepBodyBytes) judge(true);
        else if (request.enoughBody?.(Buffer.concat(chunks))) judge(false);
      });
      res.on('error', (err) => fail(err.message));
      res.on('end', () => judge(false));
    });
    req.end(request.body);
  });
}
