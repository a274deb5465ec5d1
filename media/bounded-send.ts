import type { WebSocket } from 'ws';

// What the gateway sends a Media Streams client, bounded: audio is paced in real time (a healthy
// client never has more than a fraction of a second waiting), so a client that lets this much pile
// up does not read at all; it is cut off rather than held in memory for the rest of the call.

/** Unsent bytes a client may leave waiting before it is closed. */
export const MAX_BUFFERED_BYTES = 512 * 1024;

export type SendingSocket = Pick<WebSocket, 'readyState' | 'OPEN' | 'bufferedAmount' | 'send' | 'terminate'>;

/** Sends `text`; false when the socket is closed, or was just cut off for not reading. */
export function sendBounded(socket: SendingSocket, text: string, limit = MAX_BUFFERED_BYTES): boolean {
  if (socket.readyState !== socket.OPEN) return false;
  if (socket.bufferedAmount > limit) {
    socket.terminate();
    return false;
  }
  socket.send(text);
  return true;
}
