import type { Duplex } from 'node:stream';
import type { Logger } from '../../lib/logger.js';
import { requestInvalid } from './errors.js';
import { newRequestId } from './request-id.js';

// Requests Node's HTTP parser cannot read (malformed request line or header, headers over the
// size limit, a request that did not arrive in time) never reach Koa. Node's own answer is a bare
// 400/431 without a body or X-Request-Id; this answers the spec's error body instead: 400
// request_invalid with a request id, then closes the connection (the stream cannot be resynced).

const REASONS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'The request headers are too large.',
  ERR_HTTP_REQUEST_TIMEOUT: 'The request did not arrive in time.',
};

interface ParserError extends Error {
  code?: string;
}

/** A `clientError` listener for the HTTP server. */
export function unreadableRequestHandler(logger: Logger) {
  return (error: ParserError, socket: Duplex) => {
    const started = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    // A reset connection has no one to answer; a response already under way cannot be replaced.
    if (error.code === 'ECONNRESET' || !socket.writable || started?.headersSent) {
      socket.destroy();
      return;
    }
    const requestId = newRequestId();
    const apiError = requestInvalid(REASONS[error.code ?? ''] ?? 'The request could not be read.');
    const body = JSON.stringify(apiError.toBody(requestId));
    socket.end(
      [
        `HTTP/1.1 ${apiError.status} Bad Request`,
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `X-Request-Id: ${requestId}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
    logger.info('request', {
      request_id: requestId,
      status: apiError.status,
      error: error.code ?? error.message,
    });
  };
}
