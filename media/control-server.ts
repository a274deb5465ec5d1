import { createServer, type Server } from 'node:http';
import { isCarrierCallback, serveCarrierCallback } from './carrier-callbacks.js';
import { isControlRequest, serveControl } from './control-api.js';
import type { GatewayContext } from './gateway-context.js';

// The media gateway's control port (MEDIA_CONTROL_LISTEN, loopback by default; telephony spec
// section 3): the control API the workers' carrier commands a call's audio with (control-api.ts)
// and the SIP side's status callbacks (carrier-callbacks.ts), each with MEDIA_CONTROL_TOKEN. Off the
// public port, so neither a stream client nor anyone on the network reaches them.

export function createControlServer(gateway: GatewayContext): Server {
  return createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://gateway').pathname;
    // A failed control request is retried by its activity; a failed callback by the SIP side.
    const serve = isControlRequest(request)
      ? serveControl
      : isCarrierCallback(request)
        ? serveCarrierCallback
        : undefined;
    if (!serve) {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: 'not found' }));
      return;
    }
    serve(request, response, gateway).catch((error: unknown) => {
      gateway.logger.error('control request failed', { path, error: `${error}` });
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
}
