import { createServer, type Server } from 'node:http';
import type { Readiness } from '../health/readiness.js';
import type { Logger } from '../logger.js';
import type { Settings } from '../settings.js';
import { METRICS_CONTENT_TYPE, metricsText } from './exposition.js';

// A process's own port for operators (METRICS_PORT, docs/operations.md "Metrics"): `GET /metrics`
// (Prometheus), `GET /healthz` (alive) and `GET /readyz` (its dependencies answer), without a key
// and never cached. The workers and the media gateway serve it; the API serves the same three
// beside /v1, or /metrics here when METRICS_PORT moves it off the public port.

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: {
  host: string;
  port: number;
  /** Readiness of the process; absent: /readyz is not served here. */
  ready?: () => Promise<Readiness>;
  logger: Logger;
}): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://metrics').pathname;
    const answer = (status: number, type: string, body: string) => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return answer(405, 'application/json', '{"error":"method not allowed"}');
    }
    const json = 'application/json; charset=utf-8';
    if (path === '/healthz') return answer(200, json, '{"status":"ok"}');
    if (path === '/readyz' && options.ready) {
      void options.ready().then(({ ready, body }) => answer(ready ? 200 : 503, json, JSON.stringify(body)));
      return;
    }
    if (path === '/metrics') {
      void metricsText().then(
        (text) => answer(200, METRICS_CONTENT_TYPE, text),
        (error: unknown) => {
          options.logger.error('metrics not collected', { error: `${error}` });
          answer(500, json, '{"error":"metrics not collected"}');
        },
      );
      return;
    }
    answer(404, json, '{"error":"not found"}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as { port: number };
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * The process's operator port when METRICS_PORT is set. A port that cannot be had is logged, not
 * fatal: the process's work (calls, deliveries, audio) matters more than its metrics.
 */
export async function serveOperatorPort(
  settings: Pick<Settings, 'host' | 'metricsPort'>,
  ready: () => Promise<Readiness>,
  logger: Logger,
): Promise<MetricsServer | undefined> {
  const range = settings.metricsPort;
  if (!range) return undefined;
  let lastError: unknown;
  // A range: the first port no other process of the namespace holds.
  for (let port = range.first; port <= range.last; port++) {
    try {
      return await startMetricsServer({ host: settings.host, port, ready, logger });
    } catch (error) {
      lastError = error;
    }
  }
  logger.error('METRICS_PORT not served', { ports: `${range.first}-${range.last}`, error: `${lastError}` });
  return undefined;
}
