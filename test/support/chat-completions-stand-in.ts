import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// A local OpenAI-compatible chat-completions server for the tests of the language-model voice
// runtime (and anything else that talks to VOICE_LLM_URL or ANALYSIS_LLM_URL): real HTTP on
// 127.0.0.1, real server-sent-event framing. Each request is answered by the test's `reply`
// function; the helpers below build the answers a real endpoint gives: a streamed answer (text in
// small pieces, tool-call deltas split across chunks, events split across network writes, SSE
// comments), a plain JSON answer, an error status with headers (a 429 with Retry-After, a 500),
// a hang, a malformed chunk.

/** One request as the stand-in received it. */
export interface SeenRequest {
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: the request body as JSON, read by the tests.
  body: any;
  /** 1-based count of the requests seen so far. */
  number: number;
  /** Epoch ms when its body was in. */
  receivedAt: number;
}

export interface ToolCallReply {
  name: string;
  /** The arguments as JSON text (streamed in pieces). */
  arguments: string;
}

/** What the stand-in does with one request. */
export type StandInReply =
  /** `stream: true`: server-sent events. `stallAfterChunks`: send that many chunks, then nothing more. */
  | {
      kind: 'stream';
      text: string;
      toolCalls?: ToolCallReply[];
      /** Milliseconds between chunks (default 1). */
      chunkDelayMs?: number;
      stallAfterChunks?: number;
      /** Told the text written so far after each event (a bench times the model's own part with it). */
      onWritten?: (textSoFar: string) => void;
    }
  /** The whole completion as one JSON body (a server that does not stream). */
  | { kind: 'json'; text: string; toolCalls?: ToolCallReply[] }
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: unknown }
  /** Accepts the request and never answers. */
  | { kind: 'hang' }
  /** A stream whose second event is not JSON. */
  | { kind: 'malformed' };

export const streamed = (text: string, toolCalls?: ToolCallReply[]): StandInReply => ({
  kind: 'stream',
  text,
  toolCalls,
});
export const endCall = (): ToolCallReply => ({ name: 'end_call', arguments: '{}' });
export const sendDigits = (digits: string): ToolCallReply => ({
  name: 'send_digits',
  arguments: JSON.stringify({ digits }),
});
export const transferCall = (number: string): ToolCallReply => ({
  name: 'transfer_call',
  arguments: JSON.stringify({ number }),
});

export interface ChatStandIn {
  /** The base URL to configure, `http://127.0.0.1:<port>/v1`. */
  url: string;
  requests: SeenRequest[];
  /** How the next requests are answered. */
  reply: (request: SeenRequest) => StandInReply | Promise<StandInReply>;
  close(): Promise<void>;
}

export async function startChatStandIn(
  reply: ChatStandIn['reply'] = () => streamed('Hello.'),
): Promise<ChatStandIn> {
  const sockets = new Set<Socket>();
  const requests: SeenRequest[] = [];
  const standIn: ChatStandIn = { url: '', requests, reply, close: async () => {} };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const request: SeenRequest = {
      path: req.url ?? '',
      headers: req.headers,
      body: text ? JSON.parse(text) : null,
      number: requests.length + 1,
      receivedAt: Date.now(),
    };
    requests.push(request);
    try {
      await answer(res, await standIn.reply(request));
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `stand-in failed: ${error}` } }));
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  standIn.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  return standIn;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function answer(res: ServerResponse, reply: StandInReply): Promise<void> {
  switch (reply.kind) {
    case 'hang':
      return; // the socket stays open until the client gives up or the stand-in closes
    case 'status':
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(
        JSON.stringify(reply.body ?? { error: { message: `status ${reply.status}`, type: 'stand_in' } }),
      );
      return;
    case 'json':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion(reply.text, reply.toolCalls ?? [])));
      return;
    case 'malformed':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'Hel' }))}\n\n`);
      res.write('data: {"choices": [{"delta": {"content": "lo\n\n');
      res.end('data: [DONE]\n\n');
      return;
    case 'stream':
      return stream(res, reply);
  }
}

/** The server-sent events of one answer, written in pieces that do not line up with the events. */
async function stream(res: ServerResponse, reply: Extract<StandInReply, { kind: 'stream' }>): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const events: string[] = [': stand-in keep-alive comment\n\n'];
  events.push(`data: ${JSON.stringify(chunk({ role: 'assistant', content: '' }))}\n\n`);
  // Text in pieces of a few characters, as models stream tokens.
  /** The text written once each event is, by event. */
  const textAfter: string[] = ['', ''];
  for (const piece of reply.text.match(/[\s\S]{1,4}/g) ?? []) {
    events.push(`data: ${JSON.stringify(chunk({ content: piece }))}\n\n`);
    textAfter.push(`${textAfter.at(-1)}${piece}`);
  }
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    // The first delta names the function; the arguments follow in several pieces.
    events.push(
      `data: ${JSON.stringify(
        chunk({
          tool_calls: [
            { index, id: `call_${index}`, type: 'function', function: { name: call.name, arguments: '' } },
          ],
        }),
      )}\n\n`,
    );
    for (const piece of call.arguments.match(/[\s\S]{1,5}/g) ?? []) {
      events.push(
        `data: ${JSON.stringify(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))}\n\n`,
      );
    }
  }
  const finish = reply.toolCalls?.length ? 'tool_calls' : 'stop';
  events.push(`data: ${JSON.stringify(chunk({}, finish))}\n\n`, 'data: [DONE]\n\n');
  let sent = 0;
  for (const event of events) {
    if (reply.stallAfterChunks !== undefined && sent >= reply.stallAfterChunks) return; // never finishes
    // Each event in two network writes, split mid-line: the client must reassemble the framing.
    const cut = Math.max(1, Math.floor(event.length / 2));
    res.write(event.slice(0, cut));
    await pause(0);
    res.write(event.slice(cut));
    reply.onWritten?.(textAfter[sent] ?? reply.text);
    sent++;
    await pause(reply.chunkDelayMs ?? 1);
  }
  res.end();
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null) {
  return {
    id: 'chatcmpl-stand-in',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'stand-in',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

function completion(text: string, toolCalls: ToolCallReply[]) {
  return {
    id: 'chatcmpl-stand-in',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'stand-in',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text || null,
          ...(toolCalls.length
            ? {
                tool_calls: toolCalls.map((call, index) => ({
                  id: `call_${index}`,
                  type: 'function',
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
        },
        finish_reason: toolCalls.length ? 'tool_calls' : 'stop',
      },
    ],
  };
}

/**
 * A value that follows a JSON Schema, as a model under a strict `json_schema` response format
 * answers: every property given, the first of an enum, a placeholder of each type.
 */
export function jsonFromSchema(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object') return null;
  const node = schema as Record<string, unknown>;
  if ('const' in node) return node.const;
  if (Array.isArray(node.enum)) return node.enum[0];
  const types = Array.isArray(node.type) ? node.type : [node.type];
  const type = types.find((each) => each !== 'null') ?? types[0];
  switch (type) {
    case 'object': {
      const properties = (node.properties ?? {}) as Record<string, unknown>;
      return Object.fromEntries(
        Object.entries(properties).map(([key, value]) => [key, jsonFromSchema(value)]),
      );
    }
    case 'array':
      return [jsonFromSchema(node.items)];
    case 'string':
      return 'example';
    case 'integer':
      return 1;
    case 'number':
      return 1.5;
    case 'boolean':
      return true;
    default:
      return null;
  }
}

/** The answer to a request with a `json_schema` response format: JSON built from its schema. */
export function schemaAnswer(request: SeenRequest, override: Record<string, unknown> = {}): StandInReply {
  const schema = request.body.response_format?.json_schema?.schema;
  const value = { ...(jsonFromSchema(schema) as Record<string, unknown>), ...override };
  return { kind: 'json', text: JSON.stringify(value) };
}
