import type { IncomingMessage, ServerResponse } from 'node:http';
import { readMediaCommand } from '../lib/media/media-command-schema.js';
import type { GatewayContext } from './gateway-context.js';
import { hangUpMissingWebCaller } from './missing-caller.js';
import { tokenMatches } from './stream-connection.js';
import { serveTransferLeg } from './transfer-legs.js';

// The control API: the call workflow's carrier (lib/carrier/media-gateway-carrier.ts) commands the
// call's audio here, `POST /media/control/calls/{callId}` with a MediaCommand (lib/media/media-control.ts)
// and `Authorization: Bearer MEDIA_CONTROL_TOKEN`, on the control port (control-server.ts). 401
// without that token, and nothing changes. 404: this gateway does not hold the call.

const CONTROL_PATH = /^\/media\/control\/calls\/([0-9a-f-]{36})$/;
const MAX_BODY_BYTES = 64 * 1024;

export function isControlRequest(request: IncomingMessage): boolean {
  return isPostTo(request, CONTROL_PATH);
}

export function isPostTo(request: IncomingMessage, path: RegExp): boolean {
  return request.method === 'POST' && path.test(new URL(request.url ?? '/', 'http://gateway').pathname);
}

export type Answer = (status: number, body: object) => void;

/**
 * A POST of the gateway's token-checked API (this one, media/carrier-callbacks.ts): the call id in
 * its `path`, its JSON body and the way to answer it; null when it was already answered (401, 400).
 */
export async function readCallRequest(
  request: IncomingMessage,
  response: ServerResponse,
  gateway: GatewayContext,
  path: RegExp,
  maxBytes = MAX_BODY_BYTES,
): Promise<{ callId: string; body: unknown; answer: Answer } | null> {
  const answer: Answer = (status, body) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  const bearer = request.headers.authorization?.replace(/^Bearer /, '');
  if (!tokenMatches(bearer, gateway.controlToken)) {
    answer(401, { error: 'invalid token' });
    return null;
  }
  const callId = path.exec(new URL(request.url ?? '/', 'http://gateway').pathname)![1];
  try {
    return { callId, body: JSON.parse(await readBody(request, maxBytes)), answer };
  } catch {
    answer(400, { error: 'the body must be JSON' });
    return null;
  }
}

export async function serveControl(
  request: IncomingMessage,
  response: ServerResponse,
  gateway: GatewayContext,
): Promise<void> {
  const read = await readCallRequest(request, response, gateway, CONTROL_PATH);
  if (!read) return;
  const { callId, answer } = read;
  const checked = readMediaCommand(read.body);
  if ('error' in checked) return answer(400, { error: checked.error });
  const { command } = checked;
  if (command.type === 'expect_leg' || command.type === 'bridge') {
    const served = await serveTransferLeg(gateway, callId, command);
    return answer(served.status, served.body);
  }
  // A release has nothing to wait for: a call whose stream is not here now (declined, cancelled
  // while ringing) has nothing to end at this gateway, and waiting held the workflow task 5 s.
  const session = await gateway.sessions.arriving(callId, command.type === 'release' ? 0 : undefined);
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

async function readBody(request: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
