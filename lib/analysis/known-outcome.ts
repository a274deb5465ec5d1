import type { TranscriptLine } from '../calls/transcript.js';
import type { CallOutcome } from './analyzer.js';

// What the service knows for a fact about how a call ended decides its outcome before any wording
// does, for every analyzer: a transferred call was transferred whatever the agent said while doing
// it ("Of course, connecting you now."), an answering machine is nobody's outcome, a caller who hung up after the greeting abandoned the
// call however the greeting was worded, and a call the agent failed in (it apologised and hung up,
// `agent_error`) was not handled, whatever thanks were said before.

/** How the call ended, as the call's record says (`end_reason`). */
export interface CallEnding {
  endReason: string | null;
}

/** The outcome the record settles, and the sentence that says why. */
export interface KnownOutcome {
  /** `unknown`: an answering machine took the call; no person was there to have an outcome. */
  outcome: CallOutcome | 'unknown' | null;
  sentence: string;
}

const GREETING_ONLY = /^\s*(hello|hi|hey|yes|yeah|hm+|uh+)\W*$/i;

/** What the caller said beyond a greeting or a yes. */
export function substantiveCallerLines(transcript: TranscriptLine[]): string[] {
  return transcript
    .filter((line) => line.role === 'caller' && !GREETING_ONLY.test(line.text))
    .map((line) => line.text);
}

/** The outcome the call's ending settles; undefined when only what was said can tell. */
export function knownOutcome(transcript: TranscriptLine[], ending: CallEnding): KnownOutcome | undefined {
  switch (ending.endReason) {
    case 'transferred':
      return { outcome: 'transferred', sentence: 'The agent transferred the call to a person.' };
    case 'agent_error':
      return {
        outcome: null,
        sentence: 'The agent failed during the call, apologised and hung up; the request was not handled.',
      };
    case 'voicemail':
      return {
        outcome: 'unknown',
        sentence: 'An answering machine took the call; no person was reached.',
      };
    case 'caller_hangup':
      if (substantiveCallerLines(transcript).length === 0) {
        return { outcome: 'abandoned', sentence: 'The caller hung up before saying anything of substance.' };
      }
  }
  return undefined;
}
