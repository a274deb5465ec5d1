import type { IncomingMessage, ServerResponse } from 'node:http';
import { WorkflowNotFoundError } from '@temporalio/client';
import { type CarrierCallback, carrierCallbackSignal } from '../lib/temporal/call-messages.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { isPostTo, readCallRequest } from './control-api.js';
import type { GatewayContext } from './gateway-context.js';

// The status callbacks of a call the SIP side placed (sip/callbacks.go): ringing, answered, busy,
// declined (no answer) and not connected, `POST /media/carrier/calls/{callId}/callback` with
// `{"type": …}` and `Authorization: Bearer MEDIA_CONTROL_TOKEN` on the control port, signalled
// into the call's workflow as a carrier's status callback. They come here because the gateway
// holding the call already has the Temporal client; the SIP side needs none. A call already over
// answers 200 too: a late callback has nothing left to tell.

const CALLBACK_PATH = /^\/media\/carrier\/calls\/([0-9a-f-]{36})\/callback$/;
const MAX_BODY_BYTES = 1024;
const TYPES: readonly string[] = ['ringing', 'answered', 'busy', 'declined', 'not_connected'];

export function isCarrierCallback(request: IncomingMessage): boolean {
  return isPostTo(request, CALLBACK_PATH);
}

export async function serveCarrierCallback(
  request: IncomingMessage,
  response: ServerResponse,
  gateway: GatewayContext,
): Promise<void> {
  const read = await readCallRequest(request, response, gateway, CALLBACK_PATH, MAX_BODY_BYTES);
  if (!read) return;
  const { callId, answer } = read;
  const type = (read.body as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !TYPES.includes(type)) {
    return answer(400, { error: `type must be one of ${TYPES.join(', ')}` });
  }
  try {
    await gateway.temporal.workflow
      .getHandle(callWorkflowId(callId))
      .signal(carrierCallbackSignal, { type } as CarrierCallback);
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  answer(200, { callId, type });
}
