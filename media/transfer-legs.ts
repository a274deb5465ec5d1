import { Call } from '../db/entities/index.js';
import type { MediaCommandAnswers, TransferLegCommand } from '../lib/media/media-control.js';
import type { GatewayContext } from './gateway-context.js';
import { TransferBridge } from './transfer-bridge.js';

// A transfer bridged in this gateway (telephony spec sections 1 and 8): a Media Streams call whose
// client would only be told the target, and every warm transfer. The call workflow dials the
// person as a leg of the call through the configured carrier, with audio to this gateway: first the
// call expects the leg (`expect_leg`), so the leg's stream may attach with the leg's own token and
// its news (answered, hung up) goes to the leg's workflow; once the person answered (and, warm,
// heard the briefing) `bridge` joins the two streams and the agent leaves. The bridge's length is
// stored on the Call as `transfer_seconds` when it ends.

export type TransferLegAnswer =
  | { status: 200; body: MediaCommandAnswers['expect_leg'] | MediaCommandAnswers['bridge'] }
  | { status: 404; body: { error: string } };

export async function serveTransferLeg(
  gateway: GatewayContext,
  callId: string,
  command: TransferLegCommand,
): Promise<TransferLegAnswer> {
  // A retried `bridge` (its answer was lost) finds the two joined already.
  if (command.type === 'bridge' && gateway.sessions.bridged(callId, command.legId)) {
    return { status: 200, body: { bridged: true } };
  }
  // Both come mid-conversation: the call is here already, or gone.
  const call = gateway.sessions.get(callId);
  if (!call) return { status: 404, body: { error: 'this gateway does not hold the call' } };
  if (command.type === 'expect_leg') {
    gateway.sessions.expectLeg(command.legId, { callId, legWorkflowId: command.legWorkflowId });
    return { status: 200, body: {} };
  }
  const leg = gateway.sessions.get(command.legId);
  const notJoined = { status: 200 as const, body: { bridged: false } };
  // The person hung up, or the caller did, just before: nothing to join (the workflow says so).
  if (!leg?.bridgeSide || !call.bridgeSide || gateway.sessions.leg(command.legId)?.callId !== callId) {
    return notJoined;
  }
  // What the agent said on either side (its last words to the caller, the briefing) plays out
  // before the two hear each other, not mixed with the first words of the other side.
  await Promise.all([call.bridgeSide.playedOut(), leg.bridgeSide.playedOut()]);
  if (gateway.sessions.bridged(callId, command.legId)) return { status: 200, body: { bridged: true } };
  const [callerSide, legSide] = [call.bridgeSide, leg.bridgeSide];
  if (!callerSide || !legSide) return notJoined;
  const logger = gateway.logger.child({ callId, legId: command.legId });
  // Both legs are the SIP side's own calls: it joins their RTP itself (media/client-join.ts).
  if (callerSide.join?.joins(legSide.join)) {
    const joined = await callerSide.join.ask(command.legId, () => {
      // As the answer is read, before either stream closes: their ends are the transfer's, not hang-ups.
      for (const [session, side] of [
        [call, callerSide],
        [leg, legSide],
      ] as const) {
        session.joinBridge({ heard: () => {}, gone: () => side.over() });
        side.hangUp('transferred');
      }
    });
    if (!joined) return notJoined;
    gateway.sessions.holdBridge(callId, command.legId, Promise.resolve());
    logger.info('transfer joined by the SIP side');
    return { status: 200, body: { bridged: true } };
  }
  const bridge = new TransferBridge(callerSide, legSide, {
    maxMs: gateway.settings.media.transferMaxMinutes * 60_000,
    ended: (seconds, why) => {
      logger.info('bridged transfer over', { seconds, why });
      // Counted in GET /usage as transfer_seconds, like the SIP side's bridge (media/carrier-callbacks.ts).
      void gateway.orm.em
        .fork()
        .nativeUpdate(Call, { id: callId }, { transferSeconds: Math.round(seconds) })
        .catch((error: unknown) =>
          logger.error('bridged transfer not counted', { seconds, error: `${error}` }),
        );
    },
  });
  call.joinBridge(bridge.callerEnd);
  leg.joinBridge(bridge.targetEnd);
  gateway.sessions.holdBridge(callId, command.legId, bridge.done);
  logger.info('transfer bridged');
  return { status: 200, body: { bridged: true } };
}
