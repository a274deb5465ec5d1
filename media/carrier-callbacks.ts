import type { IncomingMessage, ServerResponse } from 'node:http';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Call } from '../db/entities/index.js';
import {
  type CarrierCallback,
  carrierCallbackSignal,
  type TransferFailure,
  type TransferReport,
} from '../lib/temporal/call-messages.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { type Answer, isPostTo, readCallRequest } from './control-api.js';
import type { GatewayContext } from './gateway-context.js';

// The status callbacks of a call the SIP side placed (sip/callbacks.go): ringing, answered, busy,
// declined (no answer), not connected, a transfer's outcome (`transfer_connected`, or
// `transfer_failed` with its `failure`) and the end of a bridged transfer, `POST /media/carrier/calls/{callId}/callback` with
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
  'transfer_connected',
  'transfer_failed',
];
const TRANSFER_FAILURES: readonly TransferFailure[] = ['busy', 'no_answer', 'refused'];
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
  let callback = { type } as CarrierCallback;
  if (type === 'answered') callback = await answeredCallback(read.body, callId, gateway);
  if (type === 'transfer_connected' || type === 'transfer_failed') {
    const failure = (read.body as { failure?: unknown }).failure as TransferFailure;
    if (type === 'transfer_failed' && !TRANSFER_FAILURES.includes(failure)) {
      return answer(400, { error: `failure must be one of ${TRANSFER_FAILURES.join(', ')}` });
    }
    const report: TransferReport =
      type === 'transfer_connected' ? { connected: true } : { connected: false, failure };
    callback = type === 'transfer_connected' ? { type } : { type, failure };
    // The call's audio here tells its workflow, in order with its lines, and hands the call over
    // or hears the person again; answered once told, so the SIP side closes the stream only after.
    const session = gateway.sessions.get(callId);
    if (session) {
      await session.transferReported(report);
      return answer(200, { callId, type });
    }
  }
  try {
    await gateway.temporal.workflow.getHandle(callWorkflowId(callId)).signal(carrierCallbackSignal, callback);
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
  body: unknown,
  callId: string,
  gateway: GatewayContext,
): Promise<CarrierCallback> {
  const speaking = (body as { speaking?: unknown }).speaking;
  if (typeof speaking === 'boolean') return { type: 'answered', speaking };
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
