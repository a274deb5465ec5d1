// Which media gateway a new call's audio goes to (telephony spec section 5): one that is not
// draining. A gateway that got SIGTERM refuses new streams (1013) and its `/readyz` answers 503
// while its live calls finish; so does one whose speech server is down. The calls the service
// places, and the test panel's Talk, take the next gateway in turn whose `/readyz` says ready; a
// gateway's answer is kept for READY_FOR_MS, so placing calls costs no request each.

import { mediaStreamsUrl } from './media-control.js';

/** A media gateway as the workers and the API reach it. */
export interface MediaGatewayAddress {
  /** Its public address, `http://HOST:MEDIA_PORT`: Media Streams and `/readyz`. */
  publicUrl: string;
  /** Its control API, MEDIA_CONTROL_URL: its name on the calls it holds (Call.mediaGateway). */
  controlUrl: string;
}

/** How long a gateway's `/readyz` answer stands. */
const READY_FOR_MS = 1000;
/** A gateway that does not answer `/readyz` within this long is not taken. */
const READYZ_TIMEOUT_MS = 500;

export interface GatewayPlacementOptions {
  /** Tests pass a clock and a `/readyz` of their own. */
  now?: () => number;
  isReady?: (gateway: MediaGatewayAddress) => Promise<boolean>;
}

export class GatewayPlacement {
  private next = 0;
  private readonly known = new Map<string, { ready: Promise<boolean>; at: number }>();
  private readonly now: () => number;
  private readonly isReady: (gateway: MediaGatewayAddress) => Promise<boolean>;

  constructor(
    readonly gateways: readonly MediaGatewayAddress[],
    options: GatewayPlacementOptions = {},
  ) {
    if (gateways.length === 0) throw new Error('GatewayPlacement needs at least one media gateway');
    this.now = options.now ?? Date.now;
    this.isReady = options.isReady ?? answersReady;
  }

  /**
   * The gateway for a new call: the next one in turn that is ready. When none is (every gateway
   * draining or down), the next in turn all the same: its stream is refused and the call says so,
   * as with one gateway.
   */
  async pick(): Promise<MediaGatewayAddress> {
    const count = this.gateways.length;
    const start = this.next;
    this.next = (this.next + 1) % count;
    if (count === 1) return this.gateways[0]!;
    const order = Array.from({ length: count }, (_, i) => this.gateways[(start + i) % count]!);
    const ready = await Promise.all(order.map((gateway) => this.ready(gateway)));
    const taken = order.find((_, i) => ready[i]) ?? order[0]!;
    // Turns continue after the one taken, so ready gateways share the calls.
    this.next = (this.gateways.indexOf(taken) + 1) % count;
    return taken;
  }

  /** The gateway whose control API is `controlUrl` (a call's pinned gateway). */
  byControlUrl(controlUrl: string): MediaGatewayAddress | undefined {
    return this.gateways.find((gateway) => gateway.controlUrl === controlUrl);
  }

  /** The Media Streams address of a call's pinned gateway; one no longer listed keeps the first one's. */
  streamsUrlOf(controlUrl: string): string {
    return mediaStreamsUrl((this.byControlUrl(controlUrl) ?? this.gateways[0]!).publicUrl);
  }

  private ready(gateway: MediaGatewayAddress): Promise<boolean> {
    const now = this.now();
    const known = this.known.get(gateway.controlUrl);
    if (known && now - known.at < READY_FOR_MS) return known.ready;
    const ready = this.isReady(gateway).catch(() => false);
    this.known.set(gateway.controlUrl, { ready, at: now });
    return ready;
  }
}

/** `GET /readyz` on the gateway's public port answers 200. */
function answersReady(gateway: MediaGatewayAddress): Promise<boolean> {
  return readyzAnswers200(new URL('/readyz', gateway.publicUrl).href, READYZ_TIMEOUT_MS);
}

/** `readyz` (a gateway's `/readyz`) answers 200 within `timeoutMs`; false for anything else or nothing. */
export async function readyzAnswers200(readyz: string, timeoutMs: number): Promise<boolean> {
  try {
    const response = await fetch(readyz, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * The gateways of MEDIA_GATEWAY_URLS (comma-separated public addresses; each one's control API at
 * its next port, MEDIA_CONTROL_LISTEN's default), else the one of MEDIA_GATEWAY_URL and
 * MEDIA_CONTROL_URL, else none.
 */
export function mediaGateways(settings: {
  gatewayUrls: readonly string[];
  gatewayUrl: string | undefined;
  controlUrl: string;
}): MediaGatewayAddress[] {
  if (settings.gatewayUrls.length > 0) {
    return settings.gatewayUrls.map((publicUrl) => {
      const url = new URL(publicUrl);
      url.port = String(Number(url.port) + 1);
      return { publicUrl, controlUrl: url.origin };
    });
  }
  return settings.gatewayUrl ? [{ publicUrl: settings.gatewayUrl, controlUrl: settings.controlUrl }] : [];
}
