// The answering machine's beep, heard in the callee's 8 kHz audio: Goertzel filters at the usual
// beep frequencies over 20 ms blocks. A block is a tone when one of them holds most of the block's
// energy; a beep is a run of such blocks at one frequency lasting minDurationMs or more. Speech is
// not: its energy is spread over several harmonics and its pitch moves from block to block.

/**
 * The power of `frequency` in `samples[start .. start + length)`: |X(f)|², the DFT at exactly that
 * frequency (Goertzel's recurrence, no bin rounding). A sine of amplitude A filling the span gives
 * about (A·length/2)².
 */
export function goertzelPower(
  samples: ArrayLike<number>,
  start: number,
  length: number,
  frequency: number,
  sampleRate: number,
): number {
  const coefficient = 2 * Math.cos((2 * Math.PI * frequency) / sampleRate);
  let previous = 0;
  let beforePrevious = 0;
  for (let i = start; i < start + length; i++) {
    const current = samples[i] + coefficient * previous - beforePrevious;
    beforePrevious = previous;
    previous = current;
  }
  return previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious;
}

/**
 * The share (0..1) of the span's energy that `power` (goertzelPower over the same span) stands for:
 * 1 for a pure sine at that frequency, about 2/length for white noise.
 */
export function powerShare(power: number, energy: number, length: number): number {
  return energy > 0 ? (2 * power) / (length * energy) : 0;
}

export interface Beep {
  /** The dominant frequency (one of the detector's), Hz. */
  frequency: number;
  /** From the first sample pushed, ms. */
  startedAtMs: number;
  endedAtMs: number;
}

export interface BeepDetectorOptions {
  /** Default 8000. */
  sampleRate?: number;
  /** The frequencies a beep may have (Hz); default BEEP_FREQUENCIES. */
  frequencies?: number[];
  /** The shortest tone that is a beep; default 200 ms. */
  minDurationMs?: number;
  /** The longest; default 5 s. Longer is a line tone (dial, busy, a fax), not a greeting's beep. */
  maxDurationMs?: number;
}

/** The frequencies answering machines and carriers' voicemail beep at. */
export const BEEP_FREQUENCIES = [440, 480, 500, 600, 620, 800, 850, 900, 950, 1000, 1100, 1200, 1400];

const BLOCK_MS = 20;
/** A tone block: one frequency holds more than this share of the block's energy. */
const MIN_TONE_SHARE = 0.6;
/** Quieter blocks (RMS, about -45 dBFS) are silence or line noise, never a tone. */
const MIN_TONE_RMS = 32768 * 10 ** (-45 / 20);
/** Blocks of something else a beep may hold and go on (a lost packet, a click). */
const MAX_GAP_BLOCKS = 1;
const DEFAULT_MIN_DURATION_MS = 200;
const DEFAULT_MAX_DURATION_MS = 5000;

/** A run of tone blocks at one frequency: block indexes, the end exclusive. */
interface ToneRun {
  frequency: number;
  firstBlock: number;
  endBlock: number;
  /** Blocks since endBlock that were not this tone. */
  gap: number;
}

/**
 * One call's beep detector. Push the callee's audio in order, in frames of any length; a beep is
 * returned by the push in which it ends (the first block after it that is not the tone, or the
 * second if MAX_GAP_BLOCKS lets one pass), timed from the first sample pushed. Should one push end
 * two beeps, the second comes with the next push.
 */
export class BeepDetector {
  private readonly sampleRate: number;
  private readonly frequencies: number[];
  private readonly blockSamples: number;
  private readonly minBlocks: number;
  private readonly maxBlocks: number;
  /** Samples of an unfinished block. */
  private readonly block: Int16Array;
  private filled = 0;
  /** Index of the block being filled. */
  private blockIndex = 0;
  private run: ToneRun | null = null;
  private readonly found: Beep[] = [];

  constructor(options: BeepDetectorOptions = {}) {
    this.sampleRate = options.sampleRate ?? 8000;
    this.frequencies = options.frequencies ?? BEEP_FREQUENCIES;
    this.blockSamples = Math.round((this.sampleRate * BLOCK_MS) / 1000);
    // A run measures up to a block short of its tone (an edge block counts only when mostly tone).
    this.minBlocks = Math.max(
      1,
      Math.ceil((options.minDurationMs ?? DEFAULT_MIN_DURATION_MS) / BLOCK_MS) - 1,
    );
    this.maxBlocks = Math.floor((options.maxDurationMs ?? DEFAULT_MAX_DURATION_MS) / BLOCK_MS);
    this.block = new Int16Array(this.blockSamples);
    if (this.frequencies.some((f) => !(f > 0 && f < this.sampleRate / 2))) {
      throw new RangeError('beep frequencies must lie between 0 and half the sample rate');
    }
  }

  /** The next frames; a beep that has ended, or null. */
  push(samples: Int16Array): Beep | null {
    let offset = 0;
    while (offset < samples.length) {
      const taken = Math.min(this.blockSamples - this.filled, samples.length - offset);
      this.block.set(samples.subarray(offset, offset + taken), this.filled);
      this.filled += taken;
      offset += taken;
      if (this.filled === this.blockSamples) {
        this.onBlock(this.toneOf(this.block));
        this.filled = 0;
        this.blockIndex++;
      }
    }
    return this.found.shift() ?? null;
  }

  /** The frequency that dominates the block, or null when none does or it is too quiet. */
  private toneOf(block: Int16Array): number | null {
    let energy = 0;
    for (let i = 0; i < block.length; i++) energy += block[i] * block[i];
    if (Math.sqrt(energy / block.length) < MIN_TONE_RMS) return null;
    let best: number | null = null;
    let bestShare = MIN_TONE_SHARE;
    for (const frequency of this.frequencies) {
      const power = goertzelPower(block, 0, block.length, frequency, this.sampleRate);
      const share = powerShare(power, energy, block.length);
      if (share > bestShare) {
        best = frequency;
        bestShare = share;
      }
    }
    return best;
  }

  private onBlock(frequency: number | null): void {
    const run = this.run;
    if (run && frequency === run.frequency) {
      run.endBlock = this.blockIndex + 1;
      run.gap = 0;
      return;
    }
    if (run && frequency === null && ++run.gap <= MAX_GAP_BLOCKS) return;
    if (run) this.close(run);
    this.run =
      frequency === null
        ? null
        : { frequency, firstBlock: this.blockIndex, endBlock: this.blockIndex + 1, gap: 0 };
  }

  private close(run: ToneRun): void {
    const blocks = run.endBlock - run.firstBlock;
    if (blocks < this.minBlocks || blocks > this.maxBlocks) return;
    const blockMs = (this.blockSamples * 1000) / this.sampleRate;
    this.found.push({
      frequency: run.frequency,
      startedAtMs: run.firstBlock * blockMs,
      endedAtMs: run.endBlock * blockMs,
    });
  }
}
