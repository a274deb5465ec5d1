import type { IncomingMessage, ServerResponse } from 'node:http';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Call } from '../db/entities/index.js';
import { readSipCallback } from '../lib/media/sip-callback-schema.js';
import {
  type CarrierCallback,
  carrierCallbackSignal,
  type TransferReport,
} from '../lib/temporal/call-messages.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { type Answer, isPostTo, readCallRequest } from './control-api.js';
import type { GatewayContext } from './gateway-context.js';

// The status callbacks of a call the SIP side placed (sip/callbacks.go): ringing, answered, busy,
// declined (no answer), not connected, a transfer's outcome (`transfer_connected`, or
// `transfer_failed` with its `failure`) and the end of a bridged transfer, `POST /media/carrier/calls/{callId}/callback` with
// `{"type": …}` (each checked whole: lib/media/sip-callback-schema.ts) and `Authorization: Bearer
// MEDIA_CONTROL_TOKEN` on the control port, signalled
// into the call's workflow as a carrier's status callback. They come here because the gateway
// holding the call already has the Temporal client; the SIP side needs none. A call already over
// answers 200 too: a late callback has nothing left to tell.

const CALLBACK_PATH = /^\/media\/carrier\/calls\/([0-9a-f-]{36})\/callback$/;
const MAX_BODY_BYTES = 1024;

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
  const checked = readSipCallback(read.body);
  if ('error' in checked) return answer(400, { error: checked.error });
  const sent = checked.callback;
  const { type } = sent;
  if (sent.type === 'transfer_ended') return recordTransferSeconds(sent.seconds, callId, answer, gateway);
  let callback: CarrierCallback = sent;
  if (sent.type === 'answered') callback = await answeredCallback(sent, callId, gateway);
  if (sent.type === 'transfer_connected' || sent.type === 'transfer_failed') {
    const report: TransferReport =
      sent.type === 'transfer_failed' ? { connected: false, failure: sent.failure } : { connected: true };
    // The call's audio here tells its workflow, in order with its lines, and hands the call over
    // or hears the person again; answered once told, so the SIP side closes the stream only after.
    const session = gateway.sessions.get(callId);
    if (session) {
      await session.transferReported(report);
      return answer(200, { callId, type });
    }
  }
  try {
    // A transfer's leg the SIP side dialled (media/transfer-legs.ts) tells the leg's own workflow.
    const workflowId = gateway.sessions.leg(callId)?.legWorkflowId ?? callWorkflowId(callId);
    await gateway.temporal.workflow.getHandle(workflowId).signal(carrierCallbackSignal, callback);
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  answer(200, { callId, type });
}

/**
 * `answered`: a carrier that says whether the far end was speaking at pick-up (`speaking`) is
 * taken at its word; for one that cannot (the SIP side) on a call that detects answering
 * machines, the call's audio here listens to the first moments and says (media/pick-up-screen.ts),
 * and how long that took (`listenedMs`): the workflow's 4 s decision counts from the answer.
 */
async function answeredCallback(
  sent: { speaking?: boolean },
  callId: string,
  gateway: GatewayContext,
): Promise<CarrierCallback> {
  if (sent.speaking !== undefined) return { type: 'answered', speaking: sent.speaking };
  const screen = gateway.sessions.get(callId)?.pickUp;
  if (!screen) return { type: 'answered' };
  const started = Date.now();
  const heard = await screen.speakingAtPickUp();
  if (heard === null) return { type: 'answered' };
  return { type: 'answered', speaking: heard, listenedMs: Date.now() - started };
}

/**
 * `transfer_ended` `{seconds}`: how long the SIP side bridged the call to its transfer target (the
 * fallback when the far end refused REFER). The call is over by then, so nothing is signalled: the
 * seconds are stored on the call (set, not added: a retried callback counts once) and GET /usage
 * counts them as `transfer_seconds`.
 */
async function recordTransferSeconds(
  seconds: number,
  callId: string,
  answer: Answer,
  gateway: GatewayContext,
) {
  await gateway.orm.em.fork().nativeUpdate(Call, { id: callId }, { transferSeconds: Math.round(seconds) });
  answer(200, { callId, type: 'transfer_ended', seconds: Math.round(seconds) });
}
