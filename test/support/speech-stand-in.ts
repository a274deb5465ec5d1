import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// A local HTTP server standing in for an OpenAI-compatible speech endpoint (VOICE_STT_URL,
// VOICE_TTS_URL) in tests of the speech ports: real HTTP on 127.0.0.1, each request answered by the
// test's `reply`, which can fail the ways a real server fails (an error status with headers, a 429
// with Retry-After, a hang that never answers).

/** One request as the stand-in received it. */
export interface SeenSpeechRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** 1-based count of the requests seen so far. */
  number: number;
}

export type SpeechStandInReply =
  | { status: number; headers?: Record<string, string>; body?: string | Uint8Array | object }
  /** Never answers (the connection stays open until the client gives up or the stand-in stops). */
  | 'hang';

export interface SpeechStandIn {
  /** The base URL, `http://127.0.0.1:PORT/v1`. */
  url: string;
  requests: SeenSpeechRequest[];
  /** Everything the request's body holds as form fields (multipart/form-data). */
  formOf(request: SeenSpeechRequest): Promise<FormData>;
  close(): Promise<void>;
}

export async function startSpeechStandIn(
  reply: (request: SeenSpeechRequest) => SpeechStandInReply | Promise<SpeechStandInReply>,
): Promise<SpeechStandIn> {
  const requests: SeenSpeechRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const seen: SeenSpeechRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks),
      number: requests.length + 1,
    };
    requests.push(seen);
    const answer = await reply(seen);
    if (answer === 'hang') return;
    const { body } = answer;
    const json = body !== undefined && typeof body === 'object' && !(body instanceof Uint8Array);
    res.writeHead(answer.status, {
      ...(json ? { 'Content-Type': 'application/json' } : {}),
      ...answer.headers,
    });
    res.end(json ? JSON.stringify(body) : body);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    formOf: (request) =>
      new Response(request.body, {
        headers: { 'Content-Type': String(request.headers['content-type']) },
      }).formData(),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
