import type { IncomingMessage, ServerResponse } from 'node:http';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Call } from '../db/entities/index.js';
import { type CarrierCallback, carrierCallbackSignal } from '../lib/temporal/call-messages.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { type Answer, isPostTo, readCallRequest } from './control-api.js';
import type { GatewayContext } from './gateway-context.js';

// The status callbacks of a call the SIP side placed (sip/callbacks.go): ringing, answered, busy,
// declined (no answer), not connected, and the end of a bridged transfer, `POST /media/carrier/calls/{callId}/callback` with
// `{"type": …}` and `Authorization: Bearer MEDIA_CONTROL_TOKEN` on the control port, signalled
// into the call's workflow as a carrier's status callback. They come here because the gateway
// holding the call already has the Temporal client; the SIP side needs none. A call already over
// answers 200 too: a late callback has nothing left to tell.

const CALLBACK_PATH = /^\/media\/carrier\/calls\/([0-9a-f-]{36})\/callback$/;
const MAX_BODY_BYTES = 1024;
const TYPES: readonly string[] = [
  'ringing',
  'answered',
  'busy',
  'declined',
  'not_connected',
  'transfer_ended',
];
/** A bridged transfer leg lasts at most TRANSFER_MAX_MINUTES (at most a day). */
const MAX_TRANSFER_SECONDS = 24 * 60 * 60;

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
  if (type === 'transfer_ended') return recordTransferSeconds(read.body, callId, answer, gateway);
  try {
    await gateway.temporal.workflow
      .getHandle(callWorkflowId(callId))
      .signal(carrierCallbackSignal, { type } as CarrierCallback);
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  answer(200, { callId, type });
}

/**
 * `transfer_ended` `{seconds}`: how long the SIP side bridged the call to its transfer target (the
 * fallback when the far end refused REFER). The call is over by then, so nothing is signalled: the
 * seconds are stored on the call (set, not added: a retried callback counts once) and GET /usage
 * counts them as `transfer_seconds`.
 */
async function recordTransferSeconds(body: unknown, callId: string, answer: Answer, gateway: GatewayContext) {
  const seconds = (body as { seconds?: unknown }).seconds;
  if (
    typeof seconds !== 'number' ||
    !Number.isFinite(seconds) ||
    seconds < 0 ||
    seconds > MAX_TRANSFER_SECONDS
  ) {
    return answer(400, { error: `seconds must be a number from 0 to ${MAX_TRANSFER_SECONDS}` });
  }
  await gateway.orm.em.fork().nativeUpdate(Call, { id: callId }, { transferSeconds: Math.round(seconds) });
  answer(200, { callId, type: 'transfer_ended', seconds: Math.round(seconds) });
}
