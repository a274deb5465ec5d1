import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import type { Orm } from '../db/orm.js';
import { type CallEventToWrite, emitCallEvent } from '../lib/calls/call-event-hand-off.js';
import { loadCall, recordTransfer } from '../lib/calls/call-status-changes.js';
import { conversationContextOf } from '../lib/calls/conversation-context.js';
import { loadTranscript } from '../lib/calls/transcript-rows.js';
import type { Carrier } from '../lib/carrier/carrier.js';
import type { Logger } from '../lib/logger.js';
import type { RecordingStore } from '../lib/recordings/recording-store.js';
import type { TransferFailure } from '../lib/temporal/call-messages.js';
import type { VoiceRuntime } from '../lib/voice-runtime/voice-runtime.js';
import { briefingFromTranscript, notReachedLine } from '../lib/voice-runtime/warm-transfer-lines.js';
import { heartbeating } from './heartbeat.js';

// The steps of a warm transfer (telephony spec section 8; workflows/call/warm-transfer.ts): the
// briefing the person rung hears, and the transfer's end, handed over or not.

export type WarmTransferFailure = TransferFailure;

export function createWarmTransferActivities(deps: {
  orm: Orm;
  carrier: Carrier;
  voiceRuntime: VoiceRuntime;
  recordings: RecordingStore;
  logger?: Logger;
}) {
  const em = () => deps.orm.em.fork() as EntityManager;
  return heartbeating({
    /**
     * The briefing, made by the voice runtime from the conversation so far (the transcript rules'
     * one when the runtime has none, or fails), said on the consultation leg `legId` as its agent's
     * first line. Returns what was said.
     */
    async briefTransferTarget(input: { callId: string; legId: string }): Promise<string> {
      const db = em();
      const [call, transcript] = await Promise.all([
        loadCall(db, input.callId),
        loadTranscript(db, input.callId),
      ]);
      const context = conversationContextOf(call);
      const caller = call.direction === 'inbound' ? call.fromNumber : call.toNumber;
      let text: string;
      try {
        text = deps.voiceRuntime.briefing
          ? await deps.voiceRuntime.briefing(context, transcript, {
              signal: Context.current().cancellationSignal,
            })
          : briefingFromTranscript(call.agentSnapshot.name, caller ?? null, transcript);
      } catch (error) {
        deps.logger?.warn('briefing not made by the voice runtime; the transcript rules make it', {
          callId: input.callId,
          error: `${error}`,
        });
        text = briefingFromTranscript(call.agentSnapshot.name, caller ?? null, transcript);
      }
      await deps.carrier.connectAgent({
        callId: input.legId,
        opening: { index: 0, text },
        legOf: input.callId,
      });
      return text;
    },

    /**
     * The person was briefed (or, cold, answered): the caller is handed over to them, the transfer
     * is `connected` and `event` (call.transferred) written. Text: the call is transferred and the
     * consultation leg leaves the agent's hands. `bridged`: the gateway holding the call's audio
     * joins the two (media/transfer-legs.ts); false when either was gone already, and nothing is
     * recorded (the workflow fails the transfer). A cold leg's far end learns it is joined as an
     * answered far end does (`connectAgent`, nobody speaking first).
     */
    async connectWarmTransfer(input: {
      callId: string;
      legId: string;
      to: string;
      bridged?: boolean;
      mode?: 'cold' | 'warm';
      event?: CallEventToWrite;
    }): Promise<boolean> {
      const db = em();
      const call = await loadCall(db, input.callId);
      const mode = input.mode ?? 'warm';
      if (!input.bridged) {
        await deps.carrier.transfer({ callId: input.callId, to: input.to });
        await deps.carrier.release({ callId: input.legId, reason: 'hang_up' });
      } else if (call.transfer?.status !== 'connected') {
        if (!(await deps.carrier.bridge?.({ callId: input.callId, legId: input.legId }))) return false;
        if (mode === 'cold') {
          await deps.carrier.connectAgent({ callId: input.legId, opening: null, legOf: input.callId });
        }
      }
      if (call.transfer?.status !== 'connected') {
        await recordTransfer(db, input.callId, {
          to: input.to,
          mode,
          started_at: call.transfer?.started_at ?? new Date().toISOString(),
          status: 'connected',
          failure: null,
          connected_at: new Date().toISOString(),
        });
      }
      if (input.event) {
        await emitCallEvent(em(), Context.current().client, input.callId, input.event, deps.recordings);
      }
      return true;
    },

    /** The person was not reached: the transfer is `failed` with why; returns the agent's line to the caller. */
    async failWarmTransfer(input: {
      callId: string;
      to: string;
      failure: WarmTransferFailure;
      /** A cold transfer bridged in the gateway (default warm). */
      mode?: 'cold';
    }): Promise<string> {
      const db = em();
      const call = await loadCall(db, input.callId);
      await recordTransfer(db, input.callId, {
        to: input.to,
        mode: input.mode ?? 'warm',
        started_at: call.transfer?.started_at ?? new Date().toISOString(),
        status: 'failed',
        failure: input.failure,
        connected_at: null,
      });
      return notReachedLine(call.agentSnapshot.language);
    },
  });
}

export type WarmTransferActivities = ReturnType<typeof createWarmTransferActivities>;
