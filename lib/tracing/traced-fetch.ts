import { context, propagation } from '@opentelemetry/api';
import { inClientSpan, tracingActive } from './tracing.js';

// `fetch` for requests to the service's dependencies (the language model through the `openai`
// package, the speech service): with tracing on, each request is a client span (method and path,
// never the query or a header) and carries `traceparent`, so a model that traces too joins the
// call's trace. Without tracing it is `fetch` itself.

export const tracedFetch: typeof fetch = (input, init) => {
  if (!tracingActive()) return fetch(input, init);
  const request = input instanceof Request ? input : undefined;
  const url = new URL(request ? request.url : input instanceof URL ? input.href : String(input));
  const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
  return inClientSpan(
    `${method} ${url.pathname}`,
    {
      'http.request.method': method,
      'url.full': `${url.origin}${url.pathname}`,
      'server.address': url.hostname,
    },
    async (span) => {
      const headers = new Headers(init?.headers ?? request?.headers);
      propagation.inject(context.active(), headers, {
        set: (carrier, key, value) => carrier.set(key, value),
      });
      const response = await fetch(input, { ...init, headers });
      span?.setAttribute('http.response.status_code', response.status);
      return response;
    },
  );
};
