import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

// The service's metrics (docs/operations.md, "Metrics"), one registry per process: each process
// counts what it does itself (the API its requests, the calls worker its calls, the webhooks worker
// its deliveries) and Prometheus sums the processes. Names and labels follow Prometheus's
// conventions: `_total` counters, `_seconds` durations, and only bounded label values (a route's
// template, a status, an end reason), never an id.

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

/** Seconds: from a fast API read to a slow model turn. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds: a call's length, ringing to a long conversation. */
const CALL_BUCKETS = [5, 15, 30, 60, 120, 300, 600, 1800, 3600];
/** Seconds: an event's wait for its delivery, retries included (the last retry is days out). */
const LAG_BUCKETS = [0.1, 0.5, 1, 5, 30, 60, 300, 1800, 3600, 21_600, 86_400, 432_000];

export const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'API requests answered, by method, route template and status.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [metricsRegistry],
});

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'API request latency, from the request to the last byte handed to the socket.',
  labelNames: ['method', 'route'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});

export const idempotentReplays = new Counter({
  name: 'idempotency_replays_total',
  help: 'Requests answered from a stored answer of the same Idempotency-Key.',
  registers: [metricsRegistry],
});

export const rateLimitRefusals = new Counter({
  name: 'rate_limit_refusals_total',
  help: 'Requests refused with 429, by limit.',
  labelNames: ['limit'] as const,
  registers: [metricsRegistry],
});

export const callsStarted = new Counter({
  name: 'calls_started_total',
  help: 'Calls connected (call.started), by direction and channel.',
  labelNames: ['direction', 'channel'] as const,
  registers: [metricsRegistry],
});

export const callsEnded = new Counter({
  name: 'calls_ended_total',
  help: 'Calls ended, by direction, channel, status and end reason.',
  labelNames: ['direction', 'channel', 'status', 'end_reason'] as const,
  registers: [metricsRegistry],
});

export const callDuration = new Histogram({
  name: 'call_duration_seconds',
  help: 'Length of ended calls that connected, by direction and channel.',
  labelNames: ['direction', 'channel'] as const,
  buckets: CALL_BUCKETS,
  registers: [metricsRegistry],
});

export const agentTurnDuration = new Histogram({
  name: 'agent_turn_seconds',
  help: "An agent turn: from asking the voice runtime to its whole answer (the turn timings' answerMs).",
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});

export const agentFirstSentence = new Histogram({
  name: 'agent_turn_first_sentence_seconds',
  help: "From asking the voice runtime to the answer's first sentence (played while the rest is made).",
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});

export const voiceToVoice = new Histogram({
  name: 'voice_turn_first_audio_seconds',
  help: "Calls with audio: from the end of the caller's speech to the agent's first audio played (voice to voice).",
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});

export const webhookAttempts = new Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts sent, by result (delivered, retry, failed).',
  labelNames: ['result'] as const,
  registers: [metricsRegistry],
});

export const webhookDeliveries = new Counter({
  name: 'webhook_deliveries_total',
  help: 'Webhook deliveries finished, by outcome (delivered, failed).',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

export const webhookDeliveryLag = new Histogram({
  name: 'webhook_delivery_lag_seconds',
  help: 'From the event to its delivery being acknowledged by the receiver, retries included.',
  buckets: LAG_BUCKETS,
  registers: [metricsRegistry],
});

export const webhookAttemptDuration = new Histogram({
  name: 'webhook_delivery_attempt_seconds',
  help: "One delivery attempt's request, from sending to the receiver's answer.",
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});

export const toolCalls = new Counter({
  name: 'agent_tool_calls_total',
  help: "Agents' tool calls finished by their step, by status (succeeded, failed, refused, invalid_arguments).",
  labelNames: ['status'] as const,
  registers: [metricsRegistry],
});

export const toolCallDuration = new Histogram({
  name: 'agent_tool_call_seconds',
  help: 'A tool call from its first request to the answer the model is given, retries included.',
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});

/** A gauge read when scraped (a pool's use, a count in the database). */
export function scrapedGauge<L extends string>(options: {
  name: string;
  help: string;
  labelNames?: readonly L[];
  collect: (set: (value: number, labels?: Partial<Record<L, string>>) => void) => Promise<void> | void;
}): Gauge<L> {
  return new Gauge<L>({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames ?? [],
    registers: [metricsRegistry],
    async collect() {
      this.reset();
      await options.collect((value, labels) => (labels ? this.set(labels, value) : this.set(value)));
    },
  });
}

export const recordingFailures = new Counter({
  name: 'recording_failures_total',
  help: 'Recordings a media gateway stopped because the disk failed (ENOSPC, EIO, …), by where: open (the call went on without one) or write (it stopped there); and recordings the store (RECORDINGS_STORE=s3) did not take yet: upload (the local file stays and is tried again). The calls went on.',
  labelNames: ['stage'] as const,
  registers: [metricsRegistry],
});
