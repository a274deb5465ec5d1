import type { TranscriptRole } from '../../db/entities/index.js';

/** One spoken line as the call workflow and the ports pass it around (index is 0-based, in order). */
export interface TranscriptLine {
  index: number;
  role: TranscriptRole;
  text: string;
  /** When the line started, in simulated seconds since the call was answered. */
  offsetSeconds: number;
}
