import type { EntityManager } from '@mikro-orm/postgresql';
import type { Context, Next } from 'koa';
import { newRequestId } from '../http/request-id.js';
import type { ApiState, AppDeps } from '../http/route.js';
import type { ReadPool } from '../read-pool.js';

/**
 * Outermost middleware: a request id on every response (X-Request-Id), deps and a request-scoped
 * EntityManager fork (created on first use, so reads that need no ORM pay nothing), and one
 * access log line per request. Only the path is logged, never the query string or headers.
 */
export function requestContext(deps: AppDeps, reads: ReadPool) {
  return async (ctx: Context & { state: ApiState }, next: Next) => {
    const started = performance.now();
    const requestId = newRequestId();
    const state = ctx.state;
    state.requestId = requestId;
    state.deps = deps;
    state.reads = reads;
    state.logger = deps.logger.child({ request_id: requestId });
    let em: EntityManager | undefined;
    Object.defineProperty(state, 'em', {
      get: () => {
        em ??= deps.orm.em.fork();
        return em;
      },
      enumerable: true,
      configurable: true,
    });
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      // A replayed error answer carries its first request's id, which the header must match.
      const sentId = ctx.response.get('X-Request-Id') || requestId;
      if (state.logger.isEnabled('info')) {
        state.logger.info('request', {
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          duration_ms: Math.round((performance.now() - started) * 10) / 10,
          key_id: state.auth?.keyId,
          ...(sentId !== requestId ? { replayed_request_id: sentId } : {}),
        });
      }
    }
  };
}
