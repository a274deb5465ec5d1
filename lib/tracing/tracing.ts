import { createRequire } from 'node:module';
import {
  type Attributes,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';

// Traces (docs/operations.md, "Traces"): with OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, a process exports OTLP/HTTP spans: the API's request
// (api/middleware/request-tracing.ts), the workflow start, the workflow and its activities through
// the Temporal SDK's OpenTelemetry interceptors (the context travels in Temporal's headers, so a
// call's trace goes from `POST /calls` through its workflow, its activities and the webhook
// deliveries of its events), and outgoing requests (webhook deliveries, the language model,
// speech) as client spans. The standard OTEL_* variables apply (OTEL_SERVICE_NAME,
// OTEL_TRACES_SAMPLER, OTEL_EXPORTER_OTLP_HEADERS, ...). Unset: nothing is traced or exported,
// and every helper here costs a branch.

const require = createRequire(import.meta.url);
const TRACER = 'voice-agent-api';

interface ActiveTracing {
  provider: NodeTracerProvider;
  spanProcessor: SpanProcessor;
  resource: Resource;
}

let active: ActiveTracing | undefined;

/** Starts tracing for this process when an OTLP endpoint is configured; false when it is not. */
export function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (active) return true;
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return false;
  const resource = new Resource({ 'service.name': env.OTEL_SERVICE_NAME || serviceName });
  // The exporter and the sampler read the rest of the standard OTEL_* variables themselves.
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  active = { provider, spanProcessor, resource };
  return true;
}

export function tracingActive(): boolean {
  return active !== undefined;
}

/** Exports what is buffered and stops (at shutdown; tests flush before they read). */
export async function flushTracing(): Promise<void> {
  await active?.provider.forceFlush();
}

export async function stopTracing(): Promise<void> {
  const was = active;
  active = undefined;
  await was?.provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
}

/** Interceptors of a Temporal client: a workflow start or signal carries the caller's trace. */
export function clientTracingInterceptors(): { workflow: WorkflowClientInterceptor[] } | undefined {
  return active ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
}

/** Workflow interceptor modules for bundleWorkflowCode (`workflowInterceptorModules`). */
export function workflowTracingModules(): string[] {
  return active ? [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')] : [];
}

/**
 * What a Worker adds for tracing: activity spans, the workflow spans' exporter (a sink), and the
 * interceptor of the client its activities use. Its bundle must come from workflowTracingModules().
 */
export function workerTracingOptions(): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  if (!active) return {};
  return {
    interceptors: {
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
      client: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
    },
    sinks: { exporter: makeWorkflowExporter(active.spanProcessor, active.resource) },
  };
}

/**
 * Runs `work` in a client span `name` (a request to another system: a webhook receiver, the
 * language model, the speech service); without tracing, just runs it.
 */
export function inClientSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  return inSpanOfKind(SpanKind.CLIENT, name, { attributes }, work);
}

/**
 * Runs `work` in an internal span `name` (a unit of this process's own work: a conversation turn
 * in the media gateway), begun at `startTime` when it began before the call (the end of the
 * caller's speech); the requests it makes are its children. Without tracing, just runs it.
 */
export function inSpan<T>(
  name: string,
  options: { attributes: Attributes; startTime?: number },
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  return inSpanOfKind(SpanKind.INTERNAL, name, options, work);
}

/** `work` in an active span of `kind`, its failure recorded on it; ended whatever happens. */
async function inSpanOfKind<T>(
  kind: SpanKind,
  name: string,
  options: { attributes: Attributes; startTime?: number },
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!active) return work(undefined);
  const { attributes, startTime } = options;
  return trace
    .getTracer(TRACER)
    .startActiveSpan(
      name,
      { kind, attributes, ...(startTime !== undefined ? { startTime } : {}) },
      async (span) => {
        try {
          return await work(span);
        } catch (error) {
          span.recordException(error as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
          throw error;
        } finally {
          span.end();
        }
      },
    );
}

export { TRACER };
