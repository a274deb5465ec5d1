import { condition, defineSignal, setHandler } from '@temporalio/workflow';
import {
  type CallerSpeech,
  type CarrierCallback,
  callerSpeechSignal,
  carrierCallbackSignal,
} from '../../lib/temporal/call-messages.js';

// Test-only stand-ins on the webhooks queue in time-skipping tests: fan-out children of call
// workflows complete at once, so no pending task holds the test server's clock back; a callback
// sink stands in for a call when a test runs the simulated far end on its own.
export async function eventFanOutWorkflow(_input: { eventId: string }): Promise<void> {}

/** Ends `callbackSinkWorkflow`. */
export const stopSinkSignal = defineSignal('stopSink');

/**
 * Stands in for a call workflow in tests of the simulated far end on its own: keeps every callback
 * and utterance the far end sends, and returns them once told to stop.
 */
export async function callbackSinkWorkflow(): Promise<(CarrierCallback | CallerSpeech)[]> {
  const received: (CarrierCallback | CallerSpeech)[] = [];
  let stopped = false;
  setHandler(carrierCallbackSignal, (callback) => void received.push(callback));
  setHandler(callerSpeechSignal, (speech) => void received.push(speech));
  setHandler(stopSinkSignal, () => {
    stopped = true;
  });
  await condition(() => stopped);
  return received;
}
