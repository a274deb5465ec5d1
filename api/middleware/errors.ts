import type { Context, Next } from 'koa';
import { isDatabaseUnavailable } from '../../db/database-errors.js';
import { rateLimitRefusals } from '../../lib/metrics/service-metrics.js';
import { ApiError, databaseUnavailable, internalError } from '../http/errors.js';
import type { ApiState } from '../http/route.js';
import { type Outcome, sendOutcome } from './outcome.js';

/**
 * Any thrown value as the spec's error answer: a database that cannot be reached is 503
 * upstream_unavailable (a retry may succeed), other unexpected errors are logged and become 500.
 */
export function errorOutcome(state: ApiState, error: unknown): Outcome {
  let apiError: ApiError;
  if (error instanceof ApiError) {
    apiError = error;
  } else if (isDatabaseUnavailable(error)) {
    state.logger.warn('database unavailable', { error });
    apiError = databaseUnavailable();
  } else {
    state.logger.error('request failed', { error });
    apiError = internalError();
  }
  // Every 429 by the limit that refused it (rate_limited, call_rate_limited, ...).
  if (apiError.status === 429) rateLimitRefusals.inc({ limit: apiError.code });
  return {
    status: apiError.status,
    bodyText: JSON.stringify(apiError.toBody(state.requestId)),
    headers: apiError.headers,
    storable: apiError.storable,
  };
}

/** Renders every error thrown below it; nothing else writes error bodies. */
export async function errorMiddleware(ctx: Context & { state: ApiState }, next: Next) {
  try {
    await next();
  } catch (error) {
    sendOutcome(ctx, errorOutcome(ctx.state, error));
  }
}
