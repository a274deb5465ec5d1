// The test panel's audio thread (an AudioWorklet, bundled on its own as /assets/talk-worklet.js):
// the microphone goes down to the phone line's 8 kHz in 20 ms frames, and the agent's 8 kHz audio
// comes up to the device's rate and plays. Marks wait in the playback queue behind the audio sent
// before them and are reported once it has played, as Twilio's client echoes them; `clear` drops
// what has not played at once (barge-in) and reports the marks it dropped, as Twilio does.

// The AudioWorklet global scope, declared here: the dashboard compiles against the DOM's types.
declare const sampleRate: number;
declare class AudioWorkletProcessor {
  readonly port: MessagePort;
}
declare function registerProcessor(name: string, processor: new () => AudioWorkletProcessor): void;

const LINE_RATE = 8000;
const FRAME_SAMPLES = 160;

/** What the page posts to the audio thread. */
export type ToWorklet =
  | { type: 'play'; samples: Float32Array }
  | { type: 'mark'; name: string }
  | { type: 'clear' };
/** What the audio thread posts back. */
export type FromWorklet = { type: 'frame'; samples: Int16Array } | { type: 'played'; name: string };

type Queued = { samples: Float32Array } | { mark: string };

class TalkProcessor extends AudioWorkletProcessor {
  /** Device samples per line sample (6 at 48 kHz). */
  private readonly step = sampleRate / LINE_RATE;
  // Capture: each line sample is the mean of the device samples in its 1/8000 s (a box low-pass).
  private sum = 0;
  private count = 0;
  private phase = 0;
  private frame = new Int16Array(FRAME_SAMPLES);
  private filled = 0;
  // Playback: 8 kHz pieces and marks in order; `position` is where in the head piece we are, in line samples.
  private readonly queue: Queued[] = [];
  private position = 0;

  constructor() {
    super();
    this.port.onmessage = (event: MessageEvent<ToWorklet>) => {
      const message = event.data;
      if (message.type === 'play') this.queue.push({ samples: message.samples });
      else if (message.type === 'mark') this.queue.push({ mark: message.name });
      else this.clear();
    };
  }

  process(inputs: Float32Array[][], outputs: Float32Array[][]): boolean {
    const input = inputs[0]?.[0];
    if (input) this.capture(input);
    const output = outputs[0];
    if (output?.[0]) {
      this.play(output[0]);
      for (let channel = 1; channel < output.length; channel++) output[channel]!.set(output[0]);
    }
    return true;
  }

  private capture(input: Float32Array): void {
    for (const sample of input) {
      this.sum += sample;
      this.count++;
      this.phase += 1;
      if (this.phase < this.step) continue;
      this.phase -= this.step;
      const mean = this.sum / this.count;
      this.sum = 0;
      this.count = 0;
      this.frame[this.filled++] = Math.max(-32768, Math.min(32767, Math.round(mean * 32767)));
      if (this.filled === FRAME_SAMPLES) {
        this.port.postMessage({ type: 'frame', samples: this.frame } satisfies FromWorklet, [
          this.frame.buffer,
        ]);
        this.frame = new Int16Array(FRAME_SAMPLES);
        this.filled = 0;
      }
    }
  }

  /** Fills `output` from the queue, interpolating between line samples; silence when it runs dry. */
  private play(output: Float32Array): void {
    const advance = 1 / this.step;
    for (let i = 0; i < output.length; i++) {
      let head = this.nextAudio();
      if (!head) {
        output.fill(0, i);
        return;
      }
      const at = Math.floor(this.position);
      const next = head.samples[at + 1] ?? head.samples[at]!;
      const fraction = this.position - at;
      output[i] = head.samples[at]! * (1 - fraction) + next * fraction;
      this.position += advance;
      if (this.position >= head.samples.length) {
        this.position -= head.samples.length;
        this.queue.shift();
        head = this.nextAudio();
        if (!head) this.position = 0;
      }
    }
  }

  /** The piece playing now; marks reached on the way have played. */
  private nextAudio(): { samples: Float32Array } | null {
    for (;;) {
      const head = this.queue[0];
      if (!head) return null;
      if ('samples' in head) return head;
      this.queue.shift();
      this.port.postMessage({ type: 'played', name: head.mark } satisfies FromWorklet);
    }
  }

  private clear(): void {
    for (const item of this.queue.splice(0)) {
      if ('mark' in item) this.port.postMessage({ type: 'played', name: item.mark } satisfies FromWorklet);
    }
    this.position = 0;
  }
}

registerProcessor('talk', TalkProcessor);
