import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// The chaos run's webhook receiver: plain HTTP on 127.0.0.1 (the service runs with
// WEBHOOKS_ALLOW_PRIVATE_TARGETS=true), one path per scenario's endpoint. It records every event id
// it receives and how often, checks the Service-Signature with the endpoint's secret, and answers
// 204 at once, as docs/webhooks.md asks of a receiver.

export interface ReceivedEvent {
  id: string;
  type: string;
  callId: string | undefined;
  count: number;
  firstAt: number;
}

export interface Inbox {
  events: Map<string, ReceivedEvent>;
  requests: number;
  badSignatures: number;
  unreadable: number;
}

export class WebhookReceiver {
  private server: Server | undefined;
  private port = 0;
  private readonly inboxes = new Map<string, Inbox>();
  private readonly secrets = new Map<string, string>();
  url = '';

  async start(): Promise<void> {
    await this.listen(0);
    this.url = `http://127.0.0.1:${this.port}`;
  }

  /** Down as a crashed receiver is: its port refuses connections, the open ones are cut. */
  async goDown(): Promise<void> {
    await this.close();
    this.server = undefined;
  }

  /** Back on the same port, so the endpoint's URL reaches it again. */
  async comeBack(): Promise<void> {
    await this.listen(this.port);
  }

  private async listen(port: number): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.record(req.url ?? '/', Buffer.concat(chunks), req.headers['service-signature']);
        res.writeHead(204).end();
      });
    });
    // Deliveries to a receiver that answers at once; many may come together after an outage.
    this.server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  inbox(path: string): Inbox {
    let inbox = this.inboxes.get(path);
    if (!inbox) {
      inbox = { events: new Map(), requests: 0, badSignatures: 0, unreadable: 0 };
      this.inboxes.set(path, inbox);
    }
    return inbox;
  }

  setSecret(path: string, secret: string): void {
    this.secrets.set(path, secret);
  }

  private record(path: string, rawBody: Buffer, signature: string | string[] | undefined): void {
    const inbox = this.inbox(path);
    inbox.requests++;
    const secret = this.secrets.get(path);
    if (!secret || typeof signature !== 'string' || !signatureMatches(rawBody, signature, secret)) {
      inbox.badSignatures++;
    }
    let event: { id?: unknown; type?: unknown; data?: { object?: { id?: unknown } } };
    try {
      event = JSON.parse(rawBody.toString('utf8'));
    } catch {
      inbox.unreadable++;
      return;
    }
    if (typeof event.id !== 'string') {
      inbox.unreadable++;
      return;
    }
    const seen = inbox.events.get(event.id);
    if (seen) {
      seen.count++;
      return;
    }
    const callId = event.data?.object?.id;
    inbox.events.set(event.id, {
      id: event.id,
      type: String(event.type),
      callId: typeof callId === 'string' ? callId : undefined,
      count: 1,
      firstAt: Date.now(),
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` (docs/webhooks.md, Receiving events). */
function signatureMatches(rawBody: Buffer, header: string, secret: string): boolean {
  let timestamp: string | undefined;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && value) timestamp = value;
    if (key === 'v1' && value) candidates.push(value);
  }
  if (!timestamp) return false;
  const expected = createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${timestamp}.`), rawBody]))
    .digest();
  return candidates.some((candidate) => {
    const given = Buffer.from(candidate, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
