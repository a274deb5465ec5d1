import { type IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

// WebSocket upgrades through the Koa pipeline: an upgrade request is run as an ordinary request
// (request id, session, role, errors), so a refusal is the API's own error answer on the socket,
// and a middleware that accepts it takes the raw socket with takeUpgrade(). Nothing else is upgraded.

interface PendingUpgrade {
  socket: Duplex;
  head: Buffer;
  response: ServerResponse;
}

const pending = new WeakMap<IncomingMessage, PendingUpgrade>();

/** The HTTP server's `upgrade` listener: runs `handle` (Koa's callback) with a response written to the socket. */
export function upgradeThrough(
  handle: (request: IncomingMessage, response: ServerResponse) => void,
): (request: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (request, socket, head) => {
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket as never);
    pending.set(request, { socket, head, response });
    // Refused (an answer was written): the connection ends with it, as a failed handshake does.
    response.on('finish', () => {
      response.detachSocket(socket as never);
      socket.end();
    });
    socket.on('error', () => socket.destroy());
    handle(request, response);
  };
}

export function isUpgradeRequest(request: IncomingMessage): boolean {
  return pending.has(request) && request.headers.upgrade?.toLowerCase() === 'websocket';
}

/** The upgrade's socket, for a middleware that accepts it (Koa must then not answer: ctx.respond = false). */
export function takeUpgrade(request: IncomingMessage): { socket: Duplex; head: Buffer } | null {
  const upgrade = pending.get(request);
  if (!upgrade) return null;
  pending.delete(request);
  upgrade.response.detachSocket(upgrade.socket as never);
  return { socket: upgrade.socket, head: upgrade.head };
}
