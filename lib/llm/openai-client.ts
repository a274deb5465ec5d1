import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { createLogger } from '../logger.js';
import { tracedFetch } from '../tracing/traced-fetch.js';

// One client for every OpenAI-compatible chat-completions endpoint the service talks to: the
// voice runtime (VOICE_LLM_*) and the call analysis (ANALYSIS_LLM_*). It is the official `openai`
// package pointed at the configured base URL, with its own retries off (each turn and each
// analysis is a Temporal activity, and Temporal retries it with the budget the workflow sets) and
// the timeout given per request. Settings with the same URL and key share one client.
//
// The API key goes into the Authorization header and nowhere else: error messages that leave
// this module are scrubbed of it (`scrubSecret`), and the client's own log lines too.

export interface OpenAiEndpoint {
  /** The base URL (…/v1); a URL that already names …/chat/completions is accepted too. */
  url: string;
  apiKey: string | undefined;
}

/** The base URL the client takes: the URL without trailing slashes and without a `/chat/completions` route. */
export function baseUrlOf(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/chat\/completions$/, '');
}

/** Where the chat-completions call goes: `<base>/chat/completions`. */
export function chatCompletionsUrl(url: string): string {
  return `${baseUrlOf(url)}/chat/completions`;
}

/** `text` with every occurrence of `secret` replaced, so an error or a log line never carries it. */
export function scrubSecret(text: string, secret: string | undefined): string {
  if (!secret) return text;
  return text.split(secret).join('[redacted]');
}

const clients = new Map<string, OpenAI>();

/** The client for `endpoint` (one per base URL and key in the process). */
export function openAiCompatibleClient(endpoint: OpenAiEndpoint): OpenAI {
  const baseURL = baseUrlOf(endpoint.url);
  const cacheKey = JSON.stringify([baseURL, endpoint.apiKey ?? null]);
  let client = clients.get(cacheKey);
  if (!client) {
    client = createClient(baseURL, endpoint.apiKey);
    clients.set(cacheKey, client);
  }
  return client;
}

function createClient(baseURL: string, apiKey: string | undefined): OpenAI {
  const logger = createLogger('warn', { fields: { component: 'openai-client' } });
  const line =
    (write: (msg: string) => void) =>
    (message: string, ...rest: unknown[]) =>
      write(scrubSecret([message, ...rest.map(describe)].join(' '), apiKey));
  return new OpenAI({
    baseURL,
    // Endpoints without authentication (a local vLLM, Ollama or llama.cpp server) get no
    // Authorization header at all: the placeholder key is never sent (the header is removed below).
    apiKey: apiKey ?? 'no-key',
    ...(apiKey ? {} : { defaultHeaders: { Authorization: null } }),
    // Not the package's OPENAI_* environment variables: these settings are the service's own
    // (only OPENAI_CUSTOM_HEADERS is read by the package whatever the options say).
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    maxRetries: 0,
    // A client span per request when tracing is on (lib/tracing/traced-fetch.ts).
    fetch: tracedFetch,
    logLevel: 'warn',
    logger: {
      error: line((msg) => logger.error(msg)),
      warn: line((msg) => logger.warn(msg)),
      info: line((msg) => logger.info(msg)),
      debug: line((msg) => logger.debug(msg)),
    },
  });
}

function describe(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** How a failed request to a chat-completions endpoint is to be treated. */
export interface RequestFailure {
  /** `status` (an HTTP answer), `timeout`, `network` (no answer), `bad_answer`, `other`. */
  kind: 'status' | 'timeout' | 'network' | 'bad_answer' | 'other';
  status?: number;
  /** A passing trouble (408, 429, 5xx, a timeout, the network, a garbled answer): worth another attempt. */
  retryable: boolean;
  /** What the endpoint asked for in `Retry-After` (or `retry-after-ms`), in milliseconds. */
  retryAfterMs?: number;
  /** Scrubbed of the API key. */
  message: string;
}

/** Classifies what a request threw; `timedOut` says whether the caller's own deadline has passed. */
export function classifyRequestFailure(
  error: unknown,
  options: { apiKey: string | undefined; timedOut: boolean; what: string; timeoutMs: number },
): RequestFailure {
  const scrub = (text: string) => scrubSecret(text, options.apiKey).slice(0, 300);
  if (options.timedOut || error instanceof APIConnectionTimeoutError) {
    return {
      kind: 'timeout',
      retryable: true,
      message: `${options.what} did not answer within ${options.timeoutMs} ms`,
    };
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const status = error.status;
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    return {
      kind: 'status',
      status,
      retryable,
      retryAfterMs: retryable ? retryAfterMs(error.headers) : undefined,
      message: scrub(`${options.what} answered ${error.message}`),
    };
  }
  if (error instanceof APIUserAbortError) {
    return { kind: 'other', retryable: true, message: `${options.what}: request aborted` };
  }
  if (error instanceof APIConnectionError) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return { kind: 'network', retryable: true, message: scrub(`${options.what} unreachable${cause}`) };
  }
  if (error instanceof SyntaxError) {
    return { kind: 'bad_answer', retryable: true, message: scrub(`${options.what}: ${error.message}`) };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { kind: 'other', retryable: true, message: scrub(`${options.what} failed: ${message}`) };
}

/** A response's headers, by name: fetch's `Headers`, or a getter over node's. */
export interface HeaderReader {
  get(name: string): string | null;
}

/**
 * `retry-after-ms`, else `Retry-After` (seconds or an HTTP date), in milliseconds; capped at
 * `capMs` (60 s unless the caller honours less).
 */
export function retryAfterMs(headers: HeaderReader | undefined, capMs = 60_000): number | undefined {
  if (!headers) return undefined;
  const cap = (ms: number) => Math.min(Math.max(0, Math.round(ms)), capMs);
  const ms = Number(headers.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms)) return cap(ms);
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return cap(seconds * 1000);
  const at = Date.parse(value);
  return Number.isFinite(at) ? cap(at - Date.now()) : undefined;
}
