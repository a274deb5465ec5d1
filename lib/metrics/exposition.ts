import { metricsRegistry } from './service-metrics.js';

// What a scrape of `/metrics` answers: the service's metrics (service-metrics.ts) and, in a
// process with Temporal workers, the Temporal SDK's own (temporal-sdk-metrics.ts), which its
// runtime serves on a loopback port of its own and is read from there, so one scrape per process
// sees both.

export const METRICS_CONTENT_TYPE = metricsRegistry.contentType;

let sdkMetricsUrl: string | undefined;

/** Where the Temporal SDK runtime of this process serves its metrics (set once it is installed). */
export function includeSdkMetrics(url: string): void {
  sdkMetricsUrl = url;
}

/** The Prometheus exposition text of this process. */
export async function metricsText(): Promise<string> {
  const [own, sdk] = await Promise.all([metricsRegistry.metrics(), sdkMetrics()]);
  return sdk ? `${own}\n${sdk}` : own;
}

async function sdkMetrics(): Promise<string> {
  if (!sdkMetricsUrl) return '';
  try {
    const response = await fetch(sdkMetricsUrl, { signal: AbortSignal.timeout(2000) });
    return response.ok ? await response.text() : '';
  } catch {
    // The runtime's exporter is not up yet (or gone at shutdown): the service's metrics still answer.
    return '';
  }
}
