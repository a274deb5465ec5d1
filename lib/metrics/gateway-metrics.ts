import { Counter, Gauge, Histogram } from 'prom-client';
import { metricsRegistry } from './service-metrics.js';

// The media gateway's own metrics (issue "media operations"; docs/operations.md, "Metrics"), on
// its METRICS_PORT with the process's other series: what its calls' audio does, per process.
// Prometheus sums the gateways. No label carries an id.

/** Seconds: a frame's voice activity (milliseconds) to a transcription or a synthesis (seconds). */
const MEDIA_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10];

export const mediaTurnDetectionLag = new Histogram({
  name: 'media_turn_detection_seconds',
  help: "From a caller frame's arrival to the turn event it gave (speech_started: voice activity; turn_ended: end of turn), as the gateway processed it.",
  labelNames: ['event'] as const,
  buckets: MEDIA_BUCKETS,
  registers: [metricsRegistry],
});

export const mediaSttDuration = new Histogram({
  name: 'media_stt_seconds',
  help: "A caller utterance's transcription by the speech-to-text endpoint, by outcome (ok, error).",
  labelNames: ['outcome'] as const,
  buckets: MEDIA_BUCKETS,
  registers: [metricsRegistry],
});

export const mediaTtsDuration = new Histogram({
  name: 'media_tts_seconds',
  help: "An agent sentence's synthesis by the text-to-speech endpoint, by outcome (ok, error).",
  labelNames: ['outcome'] as const,
  buckets: MEDIA_BUCKETS,
  registers: [metricsRegistry],
});

export const mediaStageQueueWait = new Histogram({
  name: 'media_stage_queue_wait_seconds',
  help: "How long an item of a call's media path waited in its stage's queue behind the items before it (stage: caller_audio, user_turns, answers, agent_voice, workflow_outbox): where a slow turn waits.",
  labelNames: ['stage'] as const,
  buckets: [0.001, ...MEDIA_BUCKETS],
  registers: [metricsRegistry],
});

/** A stage's queue, its waits observed in media_stage_queue_wait_seconds. */
export function stageQueueWait(stage: string): { onWait: (ms: number) => void } {
  const observe = mediaStageQueueWait.labels(stage);
  return { onWait: (ms) => observe.observe(ms / 1000) };
}

export const mediaBargeIns = new Counter({
  name: 'media_barge_ins_total',
  help: 'Times a caller spoke over the agent long enough to stop it.',
  registers: [metricsRegistry],
});

export const mediaOutboxBacklog = new Gauge({
  name: 'media_outbox_backlog',
  help: 'Signals of live calls waiting to reach their call workflow (Temporal slow or down).',
  registers: [metricsRegistry],
});

export const mediaOutboxRetries = new Counter({
  name: 'media_outbox_retries_total',
  help: 'Signals sent again because the call workflow could not be reached.',
  registers: [metricsRegistry],
});

/** What a gateway reports of its calls when scraped (media/main.ts). */
export interface GatewayGaugeSource {
  /** Streams with their audio open. */
  streams(): number;
  /** Caller frames waiting for voice activity detection, over every call. */
  framesBehind(): number;
}

let source: GatewayGaugeSource | null = null;

/** The gateway whose calls the scraped gauges read (one per process). */
export function watchGatewayCalls(gateway: GatewayGaugeSource): void {
  source = gateway;
}

new Gauge({
  name: 'media_streams_live',
  help: 'Media Streams connections whose call audio this gateway holds.',
  registers: [metricsRegistry],
  collect() {
    this.set(source?.streams() ?? 0);
  },
});

new Gauge({
  name: 'media_frames_behind',
  help: "Caller frames (20 ms each) received but not yet through voice activity detection, over every call: how far behind real time the gateway's listening is.",
  registers: [metricsRegistry],
  collect() {
    this.set(source?.framesBehind() ?? 0);
  },
});

/** Times `work`, observed in `histogram` with its outcome. */
export async function timed<T>(histogram: Histogram<'outcome'>, work: () => Promise<T>): Promise<T> {
  const end = histogram.startTimer();
  try {
    const result = await work();
    end({ outcome: 'ok' });
    return result;
  } catch (error) {
    end({ outcome: 'error' });
    throw error;
  }
}
