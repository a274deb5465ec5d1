import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { CallerSpeech, CarrierCallback } from '../lib/temporal/call-messages.js';
import { callerSpeechSignal, carrierCallbackSignal } from '../lib/temporal/call-messages.js';
import type { FarEndAudio } from '../lib/temporal/workflow-contracts.js';
import type { SpeakingFarEnds } from './speaking-far-end.js';

// The simulated far end's one step that touches the world: its callbacks into the call workflow.
// Run as a local activity (workflows/simulated-callee-workflow.ts, patch `lean-far-end-1`), a
// callback is one marker in the far end's history instead of a signal command, its completion
// event and the workflow task that completion wakes.

export type FarEndMessage = (
  | { callWorkflowId: string; kind: 'callback'; callback: CarrierCallback }
  | { callWorkflowId: string; kind: 'speech'; speech: CallerSpeech }
  /** A speaking person who called in connects their stream (nothing is signalled). */
  | { callWorkflowId: string; kind: 'attach' }
) & {
  /** A speaking far end (docs/voice.md, "The simulator speaks"): its stream's gateway and call. */
  audio?: FarEndAudio;
};

/**
 * `speaking`: the far ends that speak, when this worker has speech (MEDIA_STREAMS_TOKEN and
 * VOICE_TTS_URL); without it a far end with audio is signalled as text, like any other.
 */
export function createCarrierSimulatorActivities(deps: { speaking?: SpeakingFarEnds } = {}) {
  /** A speaking far end's answer, line or hang-up, taken by its stream; undefined: signalled as usual. */
  const speak = async (input: FarEndMessage): Promise<boolean | undefined> => {
    const { audio } = input;
    if (!audio || !deps.speaking) return undefined;
    if (input.kind === 'attach') return deps.speaking.answer(audio);
    if (input.kind === 'speech') return deps.speaking.say(audio, input.speech.text);
    if (input.callback.type === 'hung_up') return deps.speaking.hangUp(audio);
    // The machine's beep is a tone after its greeting's audio: the gateway hears it (media/pick-up-screen.ts).
    if (input.callback.type === 'beep') return deps.speaking.beep(audio);
    // Answered once the stream is attached: the agent's first words find it there.
    if (input.callback.type === 'answered' && !(await deps.speaking.answer(audio))) return false;
    return undefined;
  };
  return {
    /**
     * Signals the call; false when the call is gone (it already ended), as a real carrier's 404.
     * With `afterMs` (far ends since patch `lean-far-end-2`) it first waits that long here, for a
     * pause too short for a durable timer.
     */
    async callBack(input: FarEndMessage & { afterMs?: number }): Promise<boolean> {
      const context = Context.current();
      if (input.afterMs !== undefined)
        await sleep(input.afterMs, undefined, { signal: context.cancellationSignal });
      const spoken = await speak(input);
      if (spoken !== undefined) return spoken;
      const handle = context.client.workflow.getHandle(input.callWorkflowId);
      try {
        if (input.kind === 'callback') await handle.signal(carrierCallbackSignal, input.callback);
        else if (input.kind === 'speech') await handle.signal(callerSpeechSignal, input.speech);
        return true;
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      }
    },
  };
}

export type CarrierSimulatorActivities = ReturnType<typeof createCarrierSimulatorActivities>;
