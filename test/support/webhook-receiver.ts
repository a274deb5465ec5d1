import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

// A local webhook receiver for tests: records every request byte for byte and answers what
// the test tells it to.

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  receivedAt: number;
  /** Whatever `onRequest` returned for this request (e.g. the test server's skipped time). */
  note?: unknown;
}

export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (the sender has to time out). */
  hang?: boolean;
}

export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Decides the answer to the n-th request (1-based) on this path. Default: 200. */
  answer: (n: number, path: string) => ReceiverAnswer;
  onRequest?: () => Promise<unknown>;
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Stops listening, as a receiver that is down: connections to `url` are refused. */
  down(): Promise<void>;
  /** Listens again on the same port (nothing to do when it listens). */
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const counts = new Map<string, number>();
  const receiver: WebhookReceiver = {
    url: '',
    requests: [],
    answer: () => ({ status: 200 }),
    async waitForRequests(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.requests.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`receiver got ${receiver.requests.length} requests, expected ${count}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      return receiver.requests;
    },
    down: () => receiver.close(),
    up: () =>
      new Promise<void>((resolve) => {
        if (server.listening) return resolve();
        server.listen(port, '127.0.0.1', resolve);
      }),
    close: () =>
      new Promise((resolve) => {
        if (!server.listening) return resolve();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const path = req.url ?? '/';
      const n = (counts.get(path) ?? 0) + 1;
      counts.set(path, n);
      const note = receiver.onRequest ? await receiver.onRequest() : undefined;
      receiver.requests.push({
        method: req.method ?? '',
        path,
        headers: req.headers,
        rawBody: Buffer.concat(chunks),
        receivedAt: Date.now(),
        note,
      });
      const answer = receiver.answer(n, path);
      if (answer.hang) return;
      if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${port}`;
  return receiver;
}
