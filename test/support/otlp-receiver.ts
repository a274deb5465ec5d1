import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// An OTLP/HTTP trace receiver in the test's process, as an operator's collector receives the
// spans: every POST /v1/traces body (JSON), flattened to its spans, each with its service's name.

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: {
    key: string;
    value: { stringValue?: string; intValue?: string | number; boolValue?: boolean };
  }[];
  events?: { name: string; timeUnixNano: string }[];
  service: string;
}

export interface OtlpReceiver {
  /** Where the exporter sends them: OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans: ReceivedSpan[];
  close(): void;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      if (request.url === '/v1/traces') spans.push(...spansOf(JSON.parse(body)));
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, spans, close: () => server.close() };
}

function spansOf(body: {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: { stringValue?: string } }[] };
    scopeSpans?: { spans?: Omit<ReceivedSpan, 'service'>[] }[];
  }[];
}): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((resource) => {
    const service =
      resource.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
    return (resource.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({ ...span, service })),
    );
  });
}
