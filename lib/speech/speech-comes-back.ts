import type { BackoffRetry } from '../retry-with-backoff.js';
import { SpeechError } from './speech-ports.js';

/**
 * How long a speech server that is briefly gone (killed and started again by its supervisor, a
 * deploy) is waited for, past a request's own quick retries (speech-request.ts): the words come
 * late rather than being lost.
 */
export const SPEECH_BACK_WITHIN_MS = 20_000;

/**
 * The backoff of a speech request that should outlast a speech server's restart: a passing failure
 * (connection refused, 5xx, a timeout) is tried again, up to `budgetMs`; a refusal (400, 401) is
 * not, nor a request its caller gave up (`signal`).
 */
export function speechComesBack(options: { budgetMs?: number; signal?: AbortSignal } = {}): BackoffRetry {
  return {
    firstMs: 500,
    maxMs: 4_000,
    budgetMs: options.budgetMs ?? SPEECH_BACK_WITHIN_MS,
    waitAfter: (error, backoffMs) =>
      !options.signal?.aborted && error instanceof SpeechError && error.retryable ? backoffMs : null,
  };
}
