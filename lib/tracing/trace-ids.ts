import { trace } from '@opentelemetry/api';

// The active span's trace and span ids for log lines (lib/logger.ts): with tracing on
// (lib/tracing/tracing.ts), a line logged inside a request, an activity or a client span names its
// trace, so a log line leads to its trace and back. Only the API package: without a registered
// tracer provider there is never an active span, and this is a lookup that finds nothing.

export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  // A span that is not recorded (sampled out) has no trace to find.
  if (!(traceFlags & 1)) return undefined;
  return { trace_id: traceId, span_id: spanId };
}
