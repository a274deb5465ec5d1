import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context, Next } from 'koa';
import { TRACER, tracingActive } from '../../lib/tracing/tracing.js';

// The API's server span (docs/operations.md, "Traces"): `POST /v1/calls` and so on, by route
// template, continuing the caller's trace when it sends `traceparent`. Everything the request does
// runs inside it: the workflow it starts carries it on. Without tracing, nothing happens here.

export async function requestTracing(ctx: Context, next: Next): Promise<void> {
  if (!tracingActive()) return next();
  const parent = propagation.extract(ROOT_CONTEXT, ctx.headers);
  const span = trace.getTracer(TRACER).startSpan(
    `${ctx.method} ${ctx.path}`,
    {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path },
    },
    parent,
  );
  try {
    await context.with(trace.setSpan(parent, span), next);
  } finally {
    const route = (ctx as Context & { _matchedRoute?: unknown })._matchedRoute;
    if (typeof route === 'string') {
      span.updateName(`${ctx.method} ${route}`);
      span.setAttribute('http.route', route);
    }
    span.setAttribute('http.response.status_code', ctx.status);
    if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }
}
