import { setTimeout as sleep } from 'node:timers/promises';
import { retryAfterMs, scrubSecret } from '../llm/openai-client.js';
import type { SpeechEndpoint } from '../settings.js';
import { tracedFetch } from '../tracing/traced-fetch.js';
import { SpeechError } from './speech-ports.js';

// One request to an OpenAI-compatible speech endpoint, with what both adapters need: a time limit
// per attempt (request to last byte), up to ATTEMPTS attempts for passing failures (429, 5xx,
// timeouts, refused or cut connections) with a short backoff that honours Retry-After, no retry of
// what another attempt cannot change (400, 401, 403, 404, …). The key goes into the Authorization
// header only; messages name the endpoint by origin and path and are scrubbed of the key.

export const ATTEMPTS = 3;
/** Backoff before the 2nd and 3rd attempt, unless Retry-After asks for longer. */
export const BACKOFF_MS = [250, 750];
/** A Retry-After longer than this is not waited for: the failure goes to the caller's own budget. */
export const MAX_RETRY_AFTER_MS = 5_000;

export interface SpeechRequest<T> {
  endpoint: SpeechEndpoint;
  /** For messages: `speech-to-text`, `text-to-speech`. */
  what: string;
  method: 'GET' | 'POST';
  /** Under the endpoint's base URL, e.g. `/audio/speech`. */
  path: string;
  /** Made anew for each attempt. */
  body?: () => FormData | string;
  contentType?: string;
  /** Reads an answer of status 2xx; a SpeechError it throws is final, other errors count as a cut connection. */
  read: (response: Response) => Promise<T>;
  /** The answers (besides 2xx) `read` takes instead of failing, e.g. 404 for an optional route. */
  alsoRead?: number[];
  signal?: AbortSignal;
  /** False: one attempt only (an answer that comes late is of no use, such as a turn's end). */
  retries?: boolean;
}

/** Sends the request, retrying passing failures; rejects with a SpeechError (or the caller's abort reason). */
export async function sendSpeechRequest<T>(request: SpeechRequest<T>): Promise<T> {
  let failure: SpeechError | undefined;
  const attempts = request.retries === false ? 1 : ATTEMPTS;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    request.signal?.throwIfAborted();
    const outcome = await attemptOnce(request);
    if (!(outcome instanceof Failure)) return outcome.value;
    failure = outcome.error;
    if (!failure.retryable || attempt === attempts) break;
    const wait = Math.max(BACKOFF_MS[attempt - 1] ?? 0, outcome.retryAfterMs ?? 0);
    if (wait > MAX_RETRY_AFTER_MS) {
      failure = new SpeechError(`${failure.message}; it asked to wait ${Math.ceil(wait / 1000)} s`, true);
      break;
    }
    await sleep(wait, undefined, { signal: request.signal }).catch(() => request.signal?.throwIfAborted());
  }
  throw failure;
}

class Failure {
  constructor(
    readonly error: SpeechError,
    readonly retryAfterMs?: number,
  ) {}
}

async function attemptOnce<T>(request: SpeechRequest<T>): Promise<{ value: T } | Failure> {
  const { endpoint } = request;
  const url = new URL(`${endpoint.url}${request.path}`);
  const where = `${request.what}: ${request.method} ${url.origin}${url.pathname}`;
  const timeout = AbortSignal.timeout(endpoint.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  const headers: Record<string, string> = {};
  if (endpoint.apiKey) headers.Authorization = `Bearer ${endpoint.apiKey}`;
  if (request.contentType) headers['Content-Type'] = request.contentType;
  const scrub = (text: string) => scrubSecret(text, endpoint.apiKey);
  try {
    const response = await tracedFetch(url, {
      method: request.method,
      headers,
      body: request.body?.(),
      signal,
    });
    if (response.ok || request.alsoRead?.includes(response.status)) {
      return { value: await request.read(response) };
    }
    const detail = scrub(await errorDetail(response));
    const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
    const error = new SpeechError(
      `${where} answered ${response.status}${detail ? `: ${detail}` : ''}`,
      retryable,
    );
    return new Failure(error, retryable ? retryAfterMs(response.headers) : undefined);
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason;
    if (error instanceof SpeechError)
      return new Failure(new SpeechError(scrub(`${where}: ${error.message}`), false));
    if (timeout.aborted) {
      return new Failure(new SpeechError(`${where} timed out after ${endpoint.timeoutMs} ms`, true));
    }
    return new Failure(new SpeechError(scrub(`${where} failed: ${connectionFailure(error)}`), true));
  }
}

/** The server's own words for a failure (OpenAI's `{"error":{"message"}}`, or a short text), at most 200 characters. */
async function errorDetail(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  let message = text;
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; detail?: unknown };
    const found = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.detail);
    if (typeof found === 'string') message = found;
  } catch {}
  message = message.replace(/\s+/g, ' ').trim();
  return message.length > 200 ? `${message.slice(0, 200)}…` : message;
}

function connectionFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
