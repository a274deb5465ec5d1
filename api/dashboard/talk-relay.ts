import { type RawData, WebSocket } from 'ws';
import type { Logger } from '../../lib/logger.js';

// One Talk socket: the browser's Media Streams messages relayed to the media gateway and the
// gateway's back, message by message. The page's `start` is rewritten: its customParameters become
// the ones the API vouches for (the call the page may talk on and that call's own stream token), so a page
// can neither learn the token nor attach to another call. Every other message passes unchanged:
// the page's audio and mark echoes up, the agent's audio, marks and `clear` down. Either side
// closing closes the other: a closed tab is a closed stream, which the gateway takes as the caller
// hanging up.

/** The page's messages held while the gateway's socket opens (20 ms each: about 4 s). */
const MAX_HELD = 200;
/** Agent audio waiting for a page that does not read it; past this the relay ends. */
const MAX_BUFFERED_BYTES = 512 * 1024;
/** Close codes one may not send (they only report what happened locally). */
const RESERVED = new Set([1005, 1006, 1015]);

export interface TalkRelayOptions {
  browser: WebSocket;
  /** ws://HOST:MEDIA_PORT/media/streams */
  streamsUrl: string;
  /** The call's own stream token (lib/media/stream-token.ts): it opens this call only. */
  token: string;
  callId: string;
  logger: Logger;
  /** The page left before the gateway took its stream: the call is hung up without it (talk-hang-up.ts). */
  hangUpUnstarted(): Promise<void>;
}

export class TalkRelay {
  private readonly gateway: WebSocket;
  private readonly held: string[] = [];
  private started = false;
  /** The gateway took the stream (its `attached` mark): from then on it tells the call about a hang-up. */
  private attached = false;
  private closed = false;
  // Declared before `done`, whose executor sets it (fields are defined in order).
  private finish: () => void = () => {};
  /** Resolves when both sockets are closed. */
  readonly done = new Promise<void>((resolve) => {
    this.finish = resolve;
  });

  constructor(private readonly options: TalkRelayOptions) {
    const { browser } = options;
    this.gateway = new WebSocket(options.streamsUrl, { maxPayload: 64 * 1024 });
    this.gateway.on('open', () => {
      for (const message of this.held.splice(0)) this.gateway.send(message);
    });
    this.gateway.on('message', (data, isBinary) => {
      if (isBinary) return;
      if (!this.attached) this.attached = isAttachedMark(data.toString());
      if (browser.readyState !== WebSocket.OPEN) return;
      if (browser.bufferedAmount > MAX_BUFFERED_BYTES) {
        this.close(1008, 'the page does not read its audio');
        return;
      }
      browser.send(data.toString());
    });
    // The gateway ended the stream (or refused it): it has told the call what it needed to.
    this.gateway.on('close', (code, reason) => this.close(code, reason.toString(), 'gateway'));
    this.gateway.on('error', (error) => {
      options.logger.warn('talk: media gateway socket failed', { callId: options.callId, error: `${error}` });
      this.close(1011, 'the media gateway cannot be reached');
    });
    browser.on('message', (data, isBinary) => {
      if (!isBinary) this.fromPage(data);
    });
    browser.on('close', () => this.close(1000, 'the caller hung up'));
    browser.on('error', () => this.close(1000, 'the caller hung up'));
  }

  /** Ends both sides (the gateway hears the caller hang up); `code` and `reason` go to the page. */
  close(code = 1001, reason = 'the dashboard is stopping', by: 'gateway' | 'us' = 'us'): void {
    if (this.closed) return;
    this.closed = true;
    const { browser, logger, callId } = this.options;
    if (by === 'us' && !this.attached) {
      this.options
        .hangUpUnstarted()
        .catch((error: unknown) => logger.warn('talk: call not hung up', { callId, error: `${error}` }));
    }
    if (browser.readyState === WebSocket.OPEN || browser.readyState === WebSocket.CONNECTING) {
      browser.close(RESERVED.has(code) ? 1011 : code, reason.slice(0, 120));
    }
    // Before it opened there is nothing to tell it: the stream never started.
    if (this.gateway.readyState === WebSocket.CONNECTING) this.gateway.terminate();
    else if (this.gateway.readyState === WebSocket.OPEN) this.gateway.close(1000, 'the caller hung up');
    const gatewayClosed = new Promise<void>((resolve) =>
      this.gateway.readyState === WebSocket.CLOSED ? resolve() : this.gateway.once('close', () => resolve()),
    );
    const browserClosed = new Promise<void>((resolve) =>
      browser.readyState === WebSocket.CLOSED ? resolve() : browser.once('close', () => resolve()),
    );
    void Promise.all([gatewayClosed, browserClosed]).then(() => this.finish());
  }

  private fromPage(data: RawData): void {
    if (this.closed) return;
    let text = data.toString();
    let message: { event?: unknown; start?: Record<string, unknown> };
    try {
      message = JSON.parse(text);
    } catch {
      return; // not a Media Streams message
    }
    if (message?.event === 'start') {
      if (this.started) return;
      this.started = true;
      const { token, callId } = this.options;
      text = JSON.stringify({ ...message, start: { ...message.start, customParameters: { token, callId } } });
    }
    if (this.gateway.readyState === WebSocket.OPEN) this.gateway.send(text);
    else if (this.held.length < MAX_HELD) this.held.push(text);
  }
}

/** The gateway's `mark` named `attached`: it took the stream (media/stream-connection.ts). */
function isAttachedMark(text: string): boolean {
  try {
    const message = JSON.parse(text) as { event?: unknown; mark?: { name?: unknown } };
    return message.event === 'mark' && message.mark?.name === 'attached';
  } catch {
    return false;
  }
}
