import { setTimeout as sleep } from 'node:timers/promises';

// The chaos run's API client: an integrator that follows the spec's retry guidance. Every POST
// carries an Idempotency-Key; 5xx, 429, 409 idempotency_request_in_progress and network errors
// are retried with the same key and exponential backoff (429 after Retry-After). A replayed
// (stored) answer is final, and so is 503 call_outcome_unknown: the spec says to look for the call
// rather than retry that key. Every 5xx is counted by status and code.

/** The 5xx answers the spec allows while a part is down (a 503 with one of these codes). */
export const ALLOWED_503_CODES = ['upstream_unavailable', 'auth_unavailable', 'call_outcome_unknown'];

const ATTEMPT_TIMEOUT_MS = 30_000;

export interface Answer {
  status: number;
  code: string | undefined;
  body: unknown;
  replayed: boolean;
  requestId: string | null;
  /** The Retry-After header, in seconds. */
  retryAfter: number | undefined;
}

export interface Tally {
  /** `<status> <code>` → count, over every request (POSTs and the poller's reads). */
  serverErrors: Map<string, number>;
  /** 5xx that the spec does not allow: 500, or 503 without one of its codes. */
  badServerErrors: { route: string; status: number; code: string | undefined; requestId: string | null }[];
  /** 4xx answers by `<status> <code>` (409 idempotency_request_in_progress while a claim is held). */
  clientErrors: Map<string, number>;
  /** 503 answers without Retry-After. */
  noRetryAfter: number;
  /** Connection refused or reset, timeouts: the API process did not answer at all. */
  networkErrors: Map<string, number>;
  requests: number;
}

export function newTally(): Tally {
  return {
    serverErrors: new Map(),
    badServerErrors: [],
    clientErrors: new Map(),
    noRetryAfter: 0,
    networkErrors: new Map(),
    requests: 0,
  };
}

export interface KeyedRequest {
  key: string;
  path: string;
  body: Record<string, unknown>;
}

export interface KeyedResult {
  /** The answer the client settled on (undefined when every attempt failed on the network). */
  final: Answer | undefined;
  attempts: number;
  /** True when the retry budget ran out before a final answer. */
  gaveUp: boolean;
  firstSentAt: number;
  lastSentAt: number;
  /** When the final answer (or the last failure) came. */
  finishedAt: number;
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly secret: string,
    public tally: Tally,
  ) {}

  /** One request, no retry. Throws only for network errors and timeouts (counted first). */
  async request(
    method: string,
    path: string,
    options: { body?: unknown; key?: string } = {},
  ): Promise<Answer> {
    const route = `${method} ${path.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '{id}').replace(/\?.*$/, '')}`;
    const headers: Record<string, string> = { Authorization: `Bearer ${this.secret}` };
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    if (options.key) headers['Idempotency-Key'] = options.key;
    this.tally.requests++;
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
      text = await response.text();
    } catch (error) {
      bump(this.tally.networkErrors, networkErrorName(error));
      throw error;
    }
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: kept as text
    }
    const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
    const answer: Answer = {
      status: response.status,
      code: typeof code === 'string' ? code : undefined,
      body,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      requestId: response.headers.get('x-request-id'),
      retryAfter: response.headers.has('retry-after')
        ? Number(response.headers.get('retry-after'))
        : undefined,
    };
    if (answer.status >= 400 && answer.status < 500) {
      bump(this.tally.clientErrors, `${answer.status} ${answer.code ?? '(no code)'}`);
    }
    if (answer.status >= 500) {
      bump(this.tally.serverErrors, `${answer.status} ${answer.code ?? '(no code)'}`);
      if (answer.status !== 503 || !answer.code || !ALLOWED_503_CODES.includes(answer.code)) {
        this.tally.badServerErrors.push({
          route,
          status: answer.status,
          code: answer.code,
          requestId: answer.requestId,
        });
      }
      if (answer.status === 503 && answer.retryAfter === undefined) this.tally.noRetryAfter++;
    }
    return answer;
  }

  /** A request that must succeed (setup): retried on anything but a 2xx for up to `budgetMs`. */
  async must(method: string, path: string, body?: unknown, key?: string, budgetMs = 60_000): Promise<Answer> {
    const deadline = Date.now() + budgetMs;
    let last = '';
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      try {
        const answer = await this.request(method, path, { body, key });
        if (answer.status < 300) return answer;
        last = `${answer.status} ${JSON.stringify(answer.body)}`;
        if (answer.status < 500 && answer.status !== 409 && answer.status !== 429) break;
      } catch (error) {
        last = networkErrorName(error);
      }
      await sleep(backoffMs(attempt));
    }
    throw new Error(`${method} ${path} failed: ${last}`);
  }

  /**
   * A creating POST as a careful integrator sends it: same key on every retry, backoff, until a
   * final answer or the budget runs out.
   */
  async postIdempotently(request: KeyedRequest, budgetMs: number): Promise<KeyedResult> {
    const firstSentAt = Date.now();
    const deadline = firstSentAt + budgetMs;
    let last: Answer | undefined;
    let lastSentAt = firstSentAt;
    for (let attempt = 0; ; attempt++) {
      lastSentAt = Date.now();
      let wait = backoffMs(attempt);
      try {
        const answer = await this.request('POST', request.path, { body: request.body, key: request.key });
        last = answer;
        if (!isRetryable(answer)) {
          const finishedAt = Date.now();
          return { final: answer, attempts: attempt + 1, gaveUp: false, firstSentAt, lastSentAt, finishedAt };
        }
        if (answer.status === 429) wait = Math.max(wait, retryAfterMs(answer));
      } catch {
        // network error or timeout: the outcome is unknown, so the same key goes again
      }
      if (Date.now() + wait > deadline) {
        return {
          final: last,
          attempts: attempt + 1,
          gaveUp: true,
          firstSentAt,
          lastSentAt,
          finishedAt: Date.now(),
        };
      }
      await sleep(wait);
    }
  }
}

function isRetryable(answer: Answer): boolean {
  if (answer.replayed) return false;
  if (answer.status >= 500) return answer.code !== 'call_outcome_unknown';
  if (answer.status === 429) return true;
  return answer.status === 409 && answer.code === 'idempotency_request_in_progress';
}

function retryAfterMs(answer: Answer): number {
  const seconds = answer.retryAfter ?? 1;
  return Number.isFinite(seconds) ? Math.min(seconds, 60) * 1000 : 1000;
}

/** 250 ms doubling to 5 s, with jitter so that a crowd of clients does not retry in step. */
export function backoffMs(attempt: number): number {
  return Math.min(5_000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
}

function networkErrorName(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'timeout';
    const cause = (error as { cause?: { code?: string } }).cause;
    if (cause?.code) return cause.code;
    return error.message;
  }
  return String(error);
}
