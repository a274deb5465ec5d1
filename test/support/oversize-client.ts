import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Sends request bodies over the API's limit the way ordinary clients do, from a process of its
// own (test/api-body-limit.test.ts): in one process with the server, the client never races the
// server's close and the bug this guards against (ECONNRESET / EPIPE instead of the 400) hides.
//
//   node --import tsx test/support/oversize-client.ts '<json of OversizeRun>'
// prints one JSON line: OversizeResult[] in the order of `cases`.

export interface OversizeCase {
  client: 'fetch' | 'http.request';
  bytes: number;
  /** No Content-Length: the body goes chunked. */
  chunked: boolean;
}

export interface OversizeRun {
  url: string;
  secret: string;
  cases: OversizeCase[];
  /** Run the cases all at once instead of one after another. */
  concurrent?: boolean;
}

export type OversizeResult =
  | {
      ok: true;
      status: number;
      body: string;
      requestId: string | null;
      connection: string | null;
      /** What writing the rest of the body ran into after the answer (http.request only). */
      writeError: string | null;
    }
  | { ok: false; error: string };

const CHUNK = Buffer.alloc(64 * 1024, 'a');

async function viaFetch(run: OversizeRun, c: OversizeCase): Promise<OversizeResult> {
  const body = c.chunked
    ? new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= c.bytes) return controller.close();
          const piece = CHUNK.subarray(0, Math.min(CHUNK.length, c.bytes - sent));
          sent += piece.length;
          controller.enqueue(new Uint8Array(piece));
        },
      })
    : Buffer.alloc(c.bytes, 'a');
  let sent = 0;
  try {
    const res = await fetch(run.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${run.secret}`, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    return {
      ok: true,
      status: res.status,
      body: await res.text(),
      requestId: res.headers.get('x-request-id'),
      connection: res.headers.get('connection'),
      writeError: null,
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { ok: false, error: `${(error as Error).message}: ${cause?.code ?? cause?.message ?? ''}` };
  }
}

/** The body written in 64 KiB pieces as fast as the socket takes them. */
function viaHttpRequest(run: OversizeRun, c: OversizeCase): Promise<OversizeResult> {
  return new Promise((resolve) => {
    let answer: Extract<OversizeResult, { ok: true }> | undefined;
    let writeError: string | null = null;
    let closed = false;
    const settle = () => {
      if (answer && closed) resolve({ ...answer, writeError });
    };
    const req = http.request(
      run.url,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${run.secret}`,
          'content-type': 'application/json',
          ...(c.chunked ? {} : { 'content-length': String(c.bytes) }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (piece: string) => {
          text += piece;
        });
        res.on('end', () => {
          answer = {
            ok: true,
            status: res.statusCode ?? 0,
            body: text,
            requestId: (res.headers['x-request-id'] as string | undefined) ?? null,
            connection: res.headers.connection ?? null,
            writeError: null,
          };
          settle();
        });
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (!answer) return resolve({ ok: false, error: error.code ?? error.message });
      writeError = error.code ?? error.message;
    });
    req.on('close', () => {
      closed = true;
      // Closed without an answer and without an error event.
      setTimeout(() => answer || resolve({ ok: false, error: 'closed without an answer' }), 100);
      settle();
    });
    let sent = 0;
    const write = () => {
      while (sent < c.bytes && !req.destroyed) {
        const piece = CHUNK.subarray(0, Math.min(CHUNK.length, c.bytes - sent));
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

export function send(run: OversizeRun, c: OversizeCase): Promise<OversizeResult> {
  return c.client === 'fetch' ? viaFetch(run, c) : viaHttpRequest(run, c);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const run = JSON.parse(process.argv[2] ?? '{}') as OversizeRun;
  const results: OversizeResult[] = [];
  if (run.concurrent) results.push(...(await Promise.all(run.cases.map((c) => send(run, c)))));
  else for (const c of run.cases) results.push(await send(run, c));
  process.stdout.write(`${JSON.stringify(results)}\n`);
}
