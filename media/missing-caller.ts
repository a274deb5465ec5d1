import { Call } from '../db/entities/index.js';
import { carrierCallbackSignal } from '../lib/temporal/call-messages.js';
import type { GatewayContext } from './gateway-context.js';

// The dashboard's Talk call (a `web` call pinned to this gateway) whose page never streamed: the
// tab closed while the call was being started, before its socket opened. No stream means no one to
// tell the call workflow that the person left, so the gateway that was to hold it does, when the
// workflow's `answer` finds no stream: the call ends `caller_hangup` at once, not by its silence
// timeout (which would also keep a trial plan's one line busy). Other calls are left as they are:
// a phone stream is there before its workflow starts, and a simulated caller may attach later.

export async function hangUpMissingWebCaller(
  gateway: Pick<GatewayContext, 'orm' | 'temporal' | 'controlUrl'>,
  callId: string,
  callWorkflowId: string,
): Promise<boolean> {
  const call = await gateway.orm.em
    .fork()
    .findOne(Call, { id: callId }, { fields: ['channel', 'mediaGateway', 'startedAt'] });
  if (call?.channel !== 'web' || call.mediaGateway !== gateway.controlUrl) return false;
  await gateway.temporal.workflow.getHandle(callWorkflowId).signal(carrierCallbackSignal, {
    type: 'hung_up',
    atSeconds: (Date.now() - call.startedAt.getTime()) / 1000,
  });
  return true;
}
