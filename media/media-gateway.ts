import { createServer, type Server } from 'node:http';
import { WebSocketServer } from 'ws';
import { reachable } from '../lib/health/reachable.js';
import { readiness } from '../lib/health/readiness.js';
import { MEDIA_STREAMS_PATH } from '../lib/media/media-control.js';
import { mediaTaskQueue } from '../lib/media/media-session.js';
import type { GatewayContext } from './gateway-context.js';
import { DRAINING_CLOSE_CODE, DRAINING_CLOSE_REASON } from './gateway-drain.js';
import { serveStream } from './stream-connection.js';

// The media gateway's public port (MEDIA_PORT): the Media Streams socket `/media/streams`,
// `/healthz` (also `/health`) and `/readyz` (docs/operations.md, "Health"), and nothing else: the
// control API and the carrier's callbacks are on the control port (control-server.ts), so the
// public port has no door a stream client's token could open beyond its own stream.

export { MEDIA_STREAMS_PATH };

/** A Media Streams message is small (20 ms of audio is 160 bytes); anything far larger is refused. */
const MAX_MESSAGE_BYTES = 64 * 1024;

/**
 * Ready: PostgreSQL and Temporal answer, this gateway's media-session worker polls, and its speech
 * (the speech-to-text and text-to-speech endpoints) accepts connections: without it every call
 * would fail, so a gateway whose speech server is down (restarting) takes no new streams.
 */
export function gatewayReadiness(gateway: GatewayContext) {
  const speech = [gateway.settings.speech.stt?.url, gateway.settings.speech.tts?.url].filter(
    (url): url is string => Boolean(url),
  );
  return readiness({
    more: {
      // A draining gateway takes no new streams: not ready, so callers go elsewhere.
      draining: async () => (gateway.drain.draining ? 'unavailable' : 'ok'),
      ...(speech.length ? { speech: () => reachable(speech) } : {}),
    },
    orm: gateway.orm,
    temporal: async () => gateway.temporal,
    namespace: gateway.settings.temporalNamespace,
    taskQueues: [
      { name: mediaTaskQueue(gateway.settings.taskQueuePrefix, gateway.controlUrl), tasks: 'activity' },
    ],
  });
}

export function createMediaGateway(gateway: GatewayContext): Server {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://gateway').pathname;
    if (request.method === 'GET' && (path === '/health' || path === '/healthz')) {
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify({ status: 'ok', calls: gateway.sessions.size }));
      return;
    }
    if (request.method === 'GET' && path === '/readyz') {
      gatewayReadiness(gateway).then(({ ready, body }) => {
        response.writeHead(ready ? 200 : 503, {
          'content-type': 'application/json',
          'cache-control': 'no-store',
        });
        response.end(JSON.stringify(body));
      });
      return;
    }
    // Everything else, the control API's paths included, is on the control port or nowhere.
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: 'not found' }));
  });
  server.on('upgrade', (request, socket, head) => {
    const path = new URL(request.url ?? '/', 'http://gateway').pathname;
    if (path !== MEDIA_STREAMS_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => {
      // Draining: the socket is refused as the protocol says, "try again later" (1013).
      if (gateway.drain.draining) ws.close(DRAINING_CLOSE_CODE, DRAINING_CLOSE_REASON);
      else serveStream(ws, request, gateway);
    });
  });
  server.on('close', () => sockets.close());
  return server;
}
