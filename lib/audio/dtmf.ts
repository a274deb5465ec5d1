// DTMF, the telephone keypad in band: tones to send digits to a phone menu, and a detector for the
// digits a caller presses. Each key is one row (low group) and one column (high group) frequency:
//
//            1209  1336  1477  1633 Hz
//    697 Hz   1     2     3     A
//    770 Hz   4     5     6     B
//    852 Hz   7     8     9     C
//    941 Hz   *     0     #     D

import { FRAME_SAMPLES, PHONE_SAMPLE_RATE } from './phone-frames.js';
import { goertzelPower, powerShare } from './tone-detector.js';

/** Every DTMF key. */
export const DTMF_DIGITS = '0123456789*#ABCD';
/** The keys row by row, as on the keypad: a key's index here is 4 × row + column. */
const KEYPAD = '123A456B789C*0#D';
export const DTMF_ROW_FREQUENCIES = [697, 770, 852, 941];
export const DTMF_COLUMN_FREQUENCIES = [1209, 1336, 1477, 1633];

export interface DtmfToneOptions {
  /** Default 8000. */
  sampleRate?: number;
  /** Each key's tone; default 100 ms. */
  toneMs?: number;
  /** Silence after each key's tone; default 60 ms. */
  gapMs?: number;
  /** The silence a `w` stands for; default 500 ms. */
  pauseMs?: number;
}

/**
 * Each of the two sines at -7 dBFS (peak): the pair peaks at -1 dBFS, so it never clips, and is
 * loud enough for a menu on the far side of a G.711 line.
 */
const TONE_AMPLITUDE = 32767 * 10 ** (-7 / 20);

function durationSamples(ms: number, sampleRate: number, name: string): number {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`${name} must be a duration in ms, not ${ms}`);
  return Math.round((ms * sampleRate) / 1000);
}

/**
 * The in-band tones for `digits` (0-9, *, #, A-D; `w` is a pause), as 16-bit PCM: each key's tone,
 * then a gap, so the far end hears every press released, also of a key pressed twice.
 */
export function dtmfTones(digits: string, options: DtmfToneOptions = {}): Int16Array {
  const sampleRate = options.sampleRate ?? 8000;
  const toneSamples = durationSamples(options.toneMs ?? 100, sampleRate, 'toneMs');
  const gapSamples = durationSamples(options.gapMs ?? 60, sampleRate, 'gapMs');
  const pauseSamples = durationSamples(options.pauseMs ?? 500, sampleRate, 'pauseMs');
  const keys = [...digits].map((character) => {
    const index = character === 'w' ? -1 : KEYPAD.indexOf(character);
    if (character !== 'w' && index < 0) {
      throw new RangeError(`${JSON.stringify(character)} is not a DTMF key (0-9, *, #, A-D) or w (a pause)`);
    }
    return index;
  });
  const length = keys.reduce((total, key) => total + (key < 0 ? pauseSamples : toneSamples + gapSamples), 0);
  const out = new Int16Array(length);
  let offset = 0;
  for (const key of keys) {
    if (key < 0) {
      offset += pauseSamples;
      continue;
    }
    const low = (2 * Math.PI * DTMF_ROW_FREQUENCIES[key >> 2]) / sampleRate;
    const high = (2 * Math.PI * DTMF_COLUMN_FREQUENCIES[key & 3]) / sampleRate;
    for (let i = 0; i < toneSamples; i++) {
      out[offset + i] = Math.round(TONE_AMPLITUDE * (Math.sin(low * i) + Math.sin(high * i)));
    }
    offset += toneSamples + gapSamples;
  }
  return out;
}

/**
 * The window each decision is made on: 205 samples (25.6 ms) at 8 kHz, the classic choice, fine
 * enough to part 697 from 770 Hz; windows overlap, a new one every 5 ms.
 */
const WINDOW_MS = 25.625;
const HOP_MS = 5;
/**
 * Windows in a row that must agree on a key (3 span 35.6 ms): measured, every pair of 30 ms or more
 * counts and none of 20 ms, inside ITU-T Q.24's accept at 40 ms, reject under 23 ms.
 */
const MIN_WINDOWS = 3;
/** Windows in a row without the key that release it: the next press of the same key counts again. */
const RELEASE_WINDOWS = 4;
/** Quieter windows (RMS, about -40 dBFS) hold no key. */
const MIN_RMS = 32768 * 10 ** (-40 / 20);
/** The pair holds at least this share of the window's energy: speech and noise spread theirs. */
const MIN_PAIR_SHARE = 0.7;
/** Twist: the column tone may be up to 8 dB weaker than the row tone (forward) or 4 dB stronger (reverse). */
const MAX_FORWARD_TWIST = 10 ** (-8 / 10);
const MAX_REVERSE_TWIST = 10 ** (4 / 10);
/** Every other of the eight tones is at least 10 dB under the weaker of the pair. */
const MAX_OTHER_RATIO = 10 ** (-10 / 10);

/**
 * One stream's DTMF detector. Push audio in order, in frames of any length; each key press comes
 * back once, from the push in which it has lasted ~40 ms, however long the key is held.
 */
export class DtmfDetector {
  private readonly sampleRate: number;
  private readonly windowSamples: number;
  private readonly hopSamples: number;
  private pending: Int16Array = new Int16Array(0);
  /** The key the last windows agreed on and how many in a row, or null. */
  private candidate: string | null = null;
  private candidateWindows = 0;
  /** The key reported and not yet released, and the windows since it was last heard. */
  private pressed: string | null = null;
  private windowsWithoutPressed = 0;

  constructor(options: { sampleRate?: number } = {}) {
    this.sampleRate = options.sampleRate ?? 8000;
    this.windowSamples = Math.round((WINDOW_MS * this.sampleRate) / 1000);
    this.hopSamples = Math.round((HOP_MS * this.sampleRate) / 1000);
  }

  /** The next frames; the keys pressed in them, in order. */
  push(samples: Int16Array): string[] {
    const buffer = new Int16Array(this.pending.length + samples.length);
    buffer.set(this.pending);
    buffer.set(samples, this.pending.length);
    const digits: string[] = [];
    let start = 0;
    for (; start + this.windowSamples <= buffer.length; start += this.hopSamples) {
      const digit = this.onWindow(this.keyIn(buffer, start));
      if (digit) digits.push(digit);
    }
    this.pending = buffer.slice(start);
    return digits;
  }

  /** A key newly pressed as of this window, or null. */
  private onWindow(key: string | null): string | null {
    if (key !== null && key === this.candidate) {
      this.candidateWindows++;
    } else {
      this.candidate = key;
      this.candidateWindows = key === null ? 0 : 1;
    }
    if (this.pressed !== null && key !== this.pressed && ++this.windowsWithoutPressed >= RELEASE_WINDOWS) {
      this.pressed = null;
    }
    if (key !== null && key === this.pressed) this.windowsWithoutPressed = 0;
    // Another key held long enough counts even before the last one's release.
    if (key !== null && this.candidateWindows >= MIN_WINDOWS && key !== this.pressed) {
      this.pressed = key;
      this.windowsWithoutPressed = 0;
      return key;
    }
    return null;
  }

  /** The key the window holds, by level, pair share, twist and the pair standing clear of the rest. */
  private keyIn(samples: Int16Array, start: number): string | null {
    const length = this.windowSamples;
    let energy = 0;
    for (let i = start; i < start + length; i++) energy += samples[i] * samples[i];
    if (Math.sqrt(energy / length) < MIN_RMS) return null;
    const rows = DTMF_ROW_FREQUENCIES.map((f) => goertzelPower(samples, start, length, f, this.sampleRate));
    const columns = DTMF_COLUMN_FREQUENCIES.map((f) =>
      goertzelPower(samples, start, length, f, this.sampleRate),
    );
    const row = strongest(rows);
    const column = strongest(columns);
    const rowPower = rows[row];
    const columnPower = columns[column];
    if (powerShare(rowPower + columnPower, energy, length) < MIN_PAIR_SHARE) return null;
    const twist = columnPower / rowPower;
    if (!(twist >= MAX_FORWARD_TWIST && twist <= MAX_REVERSE_TWIST)) return null;
    const ceiling = Math.min(rowPower, columnPower) * MAX_OTHER_RATIO;
    if (rows.some((power, i) => i !== row && power > ceiling)) return null;
    if (columns.some((power, i) => i !== column && power > ceiling)) return null;
    return KEYPAD[4 * row + column];
  }
}

function strongest(powers: number[]): number {
  let best = 0;
  for (let i = 1; i < powers.length; i++) if (powers[i] > powers[best]) best = i;
  return best;
}

/**
 * The 20 ms phone frames (8 kHz) of keys pressed, in order. `asEvents`: for a client that plays keys
 * itself (RFC 4733), each key is silence of its length whose first frame names the key (a pause `w`
 * names none); else the frames carry the tones.
 */
export function keyFrames(
  digits: string,
  options: { asEvents: boolean },
): { frame: Int16Array; key?: string }[] {
  const frames: { frame: Int16Array; key?: string }[] = [];
  for (const digit of digits) {
    const tones = dtmfTones(digit, { sampleRate: PHONE_SAMPLE_RATE });
    const samples = options.asEvents ? new Int16Array(tones.length) : tones;
    for (let at = 0; at < samples.length; at += FRAME_SAMPLES) {
      const frame = new Int16Array(FRAME_SAMPLES);
      frame.set(samples.subarray(at, at + FRAME_SAMPLES));
      frames.push(options.asEvents && at === 0 && digit !== 'w' ? { frame, key: digit } : { frame });
    }
  }
  return frames;
}
