import { createServer } from 'node:net';
import type { TelemetryOptions } from '@temporalio/worker';
import { includeSdkMetrics } from './exposition.js';

// The Temporal SDK's worker metrics (task slots, poll latency, schedule-to-start, sticky cache):
// its Rust core exports them in the Prometheus format on an address of its own. Bound to a free
// loopback port and read by this process's `/metrics` (exposition.ts), with Prometheus's naming:
// `_total` counters, durations in seconds with the unit in the name.

/** Telemetry options for Runtime.install that export the SDK's metrics where `/metrics` reads them. */
export async function sdkMetricsTelemetry(): Promise<TelemetryOptions> {
  const port = await freeLoopbackPort();
  includeSdkMetrics(`http://127.0.0.1:${port}/metrics`);
  return {
    metrics: {
      prometheus: {
        bindAddress: `127.0.0.1:${port}`,
        countersTotalSuffix: true,
        unitSuffix: true,
        useSecondsForDurations: true,
      },
    },
  };
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
