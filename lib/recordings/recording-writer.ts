import * as fs from 'node:fs';
import { mkdir } from 'node:fs/promises';
import wavefile from 'wavefile';
import { recordingPath } from './recording-files.js';

// A call's recording as the media gateway writes it: one WAV file, 8 kHz, 16-bit PCM, channel 1
// the caller and channel 2 the agent, both on one clock (milliseconds since the recording began).
//
// Agent audio is handed over before it plays (a whole synthesized sentence at once) while the
// caller's arrives as it is spoken, and a barge-in may take back agent audio that never played.
// So samples first land in a window in memory that starts at what the file already holds; every
// FLUSH_EVERY_MS of caller audio, what lies more than HOLDBACK_MS behind the caller's clock (no
// barge-in can still cut it) is interleaved and appended. The window has a fixed size, so memory
// stays the same however long the call: audio that would not fit pushes the oldest part out to
// the file first.
//
// Crash safety: each flush appends the samples first and then rewrites the header's two size
// fields (RIFF and data), so at every moment the header describes only bytes that are on disk; a
// process killed at any point leaves a valid WAV of everything flushed before. wavefile builds the
// header and encodes the samples; it makes whole files in memory, which a recording of unbounded
// length cannot be, so the two size fields (at the offsets RIFF fixes: 4, and the 4 bytes before
// the samples) are the only bytes patched here. Writes are synchronous: one small write (16 KB a
// second) into the page cache per flush, and no queue of pending writes that could grow.
//
// A failing disk ends the recording, never the call (telephony spec section 4): the first write,
// flush or close that fails (ENOSPC, EIO, …) stops this recording (the file keeps what its header
// already describes), is reported once through `onFailure`, and every later call is a no-op; no
// method throws or rejects because of the disk.

export const RECORDING_SAMPLE_RATE = 8000;
const SAMPLES_PER_MS = RECORDING_SAMPLE_RATE / 1000;
/** The window: audio from the file's end up to this far ahead is held in memory (2 × 480 KB). */
const WINDOW_MS = 30_000;
/** Agent audio this recent may still be cut by a barge-in, so it is not flushed yet. */
const HOLDBACK_MS = 2_000;
const FLUSH_EVERY_MS = 1_000;
const WINDOW_SAMPLES = WINDOW_MS * SAMPLES_PER_MS;
const BYTES_PER_FRAME = 4;

/** The file operations a recording makes: node:fs's, or a test's that fail on cue. */
export type RecordingFiles = Pick<
  typeof fs,
  'openSync' | 'writeSync' | 'renameSync' | 'fsyncSync' | 'closeSync'
>;

export interface RecordingOptions {
  /** Called once, with the error, when the recording stops because a write failed. */
  onFailure?: (error: unknown) => void;
  files?: RecordingFiles;
}

export class RecordingWriter {
  /** Samples per channel already in the file; the window starts here. */
  private flushed = 0;
  /** One past the last sample written so far, per channel (absolute sample positions). */
  private callerEnd = 0;
  private agentEnd = 0;
  private readonly callerWindow = new Int16Array(WINDOW_SAMPLES);
  private readonly agentWindow = new Int16Array(WINDOW_SAMPLES);
  private closed = false;
  /** A write failed: the recording stopped there. */
  private failed = false;

  private constructor(
    private readonly fd: number,
    private readonly headerBytes: number,
    private readonly files: RecordingFiles,
    private readonly onFailure: (error: unknown) => void,
  ) {}

  /**
   * Opens (creates) the call's recording file `${dir}/${callId}.wav`: 8 kHz, 16-bit PCM, 2 channels
   * (1 caller, 2 agent). Rejects when the file cannot be made (the caller goes on without one).
   */
  static async open(dir: string, callId: string, options: RecordingOptions = {}): Promise<RecordingWriter> {
    const files = options.files ?? fs;
    const file = recordingPath(dir, callId);
    await mkdir(dir, { recursive: true });
    const header = encode(new Int16Array(0), new Int16Array(0));
    // The header is written under another name first, so the call's file never exists without
    // one (its existence is has_recording); the open descriptor follows the rename.
    const fd = files.openSync(`${file}.new`, 'w');
    try {
      files.writeSync(fd, header);
      files.renameSync(`${file}.new`, file);
    } catch (error) {
      files.closeSync(fd);
      throw error;
    }
    return new RecordingWriter(fd, header.length, files, options.onFailure ?? (() => {}));
  }

  /** Whether a write failed and the recording stopped. */
  get stopped(): boolean {
    return this.failed;
  }

  /** Caller audio (8 kHz mono 16-bit) at `atMs` milliseconds after the recording started; gaps are silence. */
  caller(samples: Int16Array, atMs: number): void {
    this.guarded(() => {
      this.callerEnd = Math.max(this.callerEnd, this.put(this.callerWindow, samples, atMs));
      const settled = this.callerEnd - HOLDBACK_MS * SAMPLES_PER_MS;
      if (settled - this.flushed >= FLUSH_EVERY_MS * SAMPLES_PER_MS) this.flushTo(settled);
    });
  }

  /** Agent audio, same clock. */
  agent(samples: Int16Array, atMs: number): void {
    this.guarded(() => {
      this.agentEnd = Math.max(this.agentEnd, this.put(this.agentWindow, samples, atMs));
    });
  }

  /** Cuts agent audio written for time after `atMs` (barge-in: what was queued but never played). */
  truncateAgentAfter(atMs: number): void {
    if (this.closed) return;
    const cut = Math.max(sampleAt(atMs), this.flushed);
    if (cut >= this.agentEnd) return;
    this.agentWindow.fill(0, cut - this.flushed, this.agentEnd - this.flushed);
    this.agentEnd = cut;
  }

  /** Flushes and closes; the file is complete (or, after a failure, holds what it held). Idempotent; never rejects. */
  async close(): Promise<void> {
    this.guarded(() => {
      if (this.closed) return;
      this.flushTo(Math.max(this.callerEnd, this.agentEnd));
      this.closed = true;
      this.files.fsyncSync(this.fd);
      this.files.closeSync(this.fd);
    });
  }

  /** Runs a step of the recording; the first that fails stops it (reported once) and nothing after runs. */
  private guarded(step: () => void): void {
    if (this.failed) return;
    try {
      step();
    } catch (error) {
      this.failed = true;
      const open = !this.closed;
      this.closed = true;
      if (open) {
        try {
          this.files.closeSync(this.fd);
        } catch {
          // The descriptor is gone either way.
        }
      }
      this.onFailure(error);
    }
  }

  /** Copies `samples` into the window at `atMs`; returns the sample position just after them. */
  private put(window: Int16Array, samples: Int16Array, atMs: number): number {
    if (this.closed) return 0;
    const start = sampleAt(atMs);
    const end = start + samples.length;
    // What would not fit pushes the window forward; what is older than the file's end is dropped.
    if (end - this.flushed > WINDOW_SAMPLES) this.flushTo(end - WINDOW_SAMPLES);
    const skip = Math.max(0, this.flushed - start);
    if (skip < samples.length) window.set(samples.subarray(skip), start + skip - this.flushed);
    return end;
  }

  /** Appends the window's samples before position `until` to the file and moves the window on. */
  private flushTo(until: number): void {
    if (this.closed) return;
    while (this.flushed < until) {
      const count = Math.min(until - this.flushed, WINDOW_SAMPLES);
      const live = Math.min(Math.max(this.callerEnd, this.agentEnd) - this.flushed, WINDOW_SAMPLES);
      // Both channels are appended together, so the gaps of either are its silence.
      const frames = encode(this.callerWindow.subarray(0, count), this.agentWindow.subarray(0, count));
      const bytes = frames.subarray(this.headerBytes);
      this.writeAll(bytes, this.headerBytes + this.flushed * BYTES_PER_FRAME);
      this.flushed += count;
      this.writeSizes();
      for (const window of [this.callerWindow, this.agentWindow]) {
        if (live > count) window.copyWithin(0, count, live);
        window.fill(0, Math.max(0, live - count));
      }
    }
  }

  /**
   * Writes all of `bytes` at `position`. A disk that is almost full takes part of a write and says
   * so only by the count (write(2) fails with ENOSPC only when nothing fit): the rest is written
   * again, and the write that then fails throws, before the header claims any of these bytes.
   */
  private writeAll(bytes: Uint8Array, position: number): void {
    for (let done = 0; done < bytes.length; ) {
      const written = this.files.writeSync(this.fd, bytes, done, bytes.length - done, position + done);
      if (written <= 0) throw new Error(`the disk took ${done} of ${bytes.length} bytes`);
      done += written;
    }
  }

  /** The header's RIFF size (offset 4) and data size (just before the samples), for what is on disk. */
  private writeSizes(): void {
    const dataBytes = this.flushed * BYTES_PER_FRAME;
    const size = Buffer.alloc(4);
    size.writeUInt32LE(this.headerBytes - 8 + dataBytes);
    this.files.writeSync(this.fd, size, 0, 4, 4);
    size.writeUInt32LE(dataBytes);
    this.files.writeSync(this.fd, size, 0, 4, this.headerBytes - 4);
  }
}

function sampleAt(atMs: number): number {
  return Math.max(0, Math.round(atMs * SAMPLES_PER_MS));
}

/** A two-channel 8 kHz 16-bit WAV of these samples, as wavefile writes it (header, then interleaved samples). */
function encode(caller: Int16Array, agent: Int16Array): Uint8Array {
  const wav = new wavefile.WaveFile();
  wav.fromScratch(2, RECORDING_SAMPLE_RATE, '16', [caller, agent]);
  return wav.toBuffer();
}
