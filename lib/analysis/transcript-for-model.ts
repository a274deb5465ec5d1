import type { TranscriptLine } from '../calls/transcript.js';
import type { CallEnding } from './known-outcome.js';

/** A call as a language model reads it: how it ended first, then one line per turn, `role: text`. */
export function transcriptForModel(transcript: TranscriptLine[], ending: CallEnding): string {
  return [
    `end_reason: ${ending.endReason ?? 'unknown'}`,
    ...transcript.map((line) => `${line.role}: ${line.text}`),
  ].join('\n');
}
