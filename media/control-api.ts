import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MediaCommand } from '../lib/media/media-control.js';
import type { GatewayContext } from './gateway-context.js';
import { hangUpMissingWebCaller } from './missing-caller.js';
import { tokenMatches } from './stream-connection.js';

// The control API: the call workflow's carrier (lib/carrier/media-gateway-carrier.ts) commands the
// call's audio here, `POST /media/control/calls/{callId}` with a MediaCommand (lib/media/media-control.ts)
// and `Authorization: Bearer MEDIA_STREAMS_TOKEN`. 404: this gateway does not hold the call.

const CONTROL_PATH = /^\/media\/control\/calls\/([0-9a-f-]{36})$/;
const MAX_BODY_BYTES = 64 * 1024;
const COMMANDS = new Set(['answer', 'connect_agent', 'sentence', 'say', 'transfer', 'release']);

export function isControlRequest(request: IncomingMessage): boolean {
  return (
    request.method === 'POST' && CONTROL_PATH.test(new URL(request.url ?? '/', 'http://gateway').pathname)
  );
}

export async function serveControl(
  request: IncomingMessage,
  response: ServerResponse,
  gateway: GatewayContext,
): Promise<void> {
  const answer = (status: number, body: object) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  const bearer = request.headers.authorization?.replace(/^Bearer /, '');
  if (!tokenMatches(bearer, gateway.token)) return answer(401, { error: 'invalid token' });
  const callId = CONTROL_PATH.exec(new URL(request.url ?? '/', 'http://gateway').pathname)![1];
  let command: MediaCommand;
  try {
    command = JSON.parse(await readBody(request)) as MediaCommand;
  } catch {
    return answer(400, { error: 'the body must be a JSON media command' });
  }
  if (typeof command !== 'object' || command === null || !COMMANDS.has(command.type)) {
    return answer(400, { error: 'unknown command' });
  }
  const session = await gateway.sessions.arriving(callId);
  if (!session) {
    if (
      command.type === 'answer' &&
      (await hangUpMissingWebCaller(gateway, callId, command.callWorkflowId))
    ) {
      gateway.logger.info('talk call without a stream: hung up', { callId });
    }
    return answer(404, { error: 'this gateway does not hold the call' });
  }
  try {
    answer(200, await session.command(command));
  } catch (error) {
    gateway.logger.warn('media command failed', { callId, command: command.type, error: `${error}` });
    answer(503, { error: String(error) });
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
