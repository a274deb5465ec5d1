import { createServer, type Server } from 'node:http';
import { WebSocketServer } from 'ws';
import { MEDIA_STREAMS_PATH } from '../lib/media/media-control.js';
import { isControlRequest, serveControl } from './control-api.js';
import type { GatewayContext } from './gateway-context.js';
import { serveStream } from './stream-connection.js';

// The media gateway's one port (MEDIA_PORT): the Media Streams socket `/media/streams`, the
// control API of the workers' carrier, and `/health`.

export { MEDIA_STREAMS_PATH };

/** A Media Streams message is small (20 ms of audio is 160 bytes); anything far larger is refused. */
const MAX_MESSAGE_BYTES = 64 * 1024;

export function createMediaGateway(gateway: GatewayContext): Server {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://gateway').pathname;
    if (request.method === 'GET' && path === '/health') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ status: 'ok', calls: gateway.sessions.size }));
      return;
    }
    if (isControlRequest(request)) {
      serveControl(request, response, gateway).catch((error: unknown) => {
        gateway.logger.error('control request failed', { error: `${error}` });
        if (!response.headersSent) response.writeHead(500);
        response.end();
      });
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: 'not found' }));
  });
  server.on('upgrade', (request, socket, head) => {
    const path = new URL(request.url ?? '/', 'http://gateway').pathname;
    if (path !== MEDIA_STREAMS_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => serveStream(ws, request, gateway));
  });
  server.on('close', () => sockets.close());
  return server;
}
