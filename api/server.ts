import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiApp } from './app.js';

export interface RunningServer {
  url: string;
  port: number;
  /** Graceful: stops accepting, lets in-flight requests finish, then closes every connection. */
  close(): Promise<void>;
}

/** After this long, connections still busy at shutdown are cut. */
export const SHUTDOWN_GRACE_MS = 10_000;

export async function listen(
  app: ApiApp,
  options: {
    host: string;
    port: number;
    reusePort?: boolean;
    /** How long an idle keep-alive connection stays open (default 5 s). */
    keepAliveTimeoutMs?: number;
  },
): Promise<RunningServer> {
  const server = http.createServer(app.koa.callback());
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 5_000;
  server.on('clientError', app.onClientError);
  server.on('upgrade', app.onUpgrade);
  let closing = false;
  // Responses finished during shutdown tell keep-alive clients to reconnect elsewhere.
  server.on('request', (_req, res) => {
    if (closing) res.setHeader('Connection', 'close');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // reusePort (SO_REUSEPORT, Linux): several processes listen on the same port and the kernel
    // spreads new connections over them; one that exits leaves the others serving.
    server.listen({ port: options.port, host: options.host, reusePort: options.reusePort ?? false }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    port,
    async close() {
      if (closing) return;
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Upgraded sockets count as connections until they end: they would hold the close up.
      await app.closeSockets();
      server.closeIdleConnections();
      const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
      const deadline = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await closed;
      clearInterval(idleSweep);
      clearTimeout(deadline);
      await app.close();
    },
  };
}
