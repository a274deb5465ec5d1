import wavefile from 'wavefile';
import { type Pcm, SpeechError } from './speech-ports.js';

// WAV in and out of the speech ports, through `wavefile` (no hand-written RIFF code).

/** `audio` as a 16-bit mono WAV file. */
export function encodeWav(audio: Pcm): Uint8Array {
  const wav = new wavefile.WaveFile();
  wav.fromScratch(1, audio.sampleRate, '16', audio.samples);
  return wav.toBuffer();
}

/** A WAV file as mono 16-bit PCM: other bit depths are converted, several channels averaged. */
export function decodeWav(bytes: Uint8Array): Pcm {
  const wav = new wavefile.WaveFile();
  try {
    wav.fromBuffer(bytes);
  } catch (error) {
    throw new SpeechError(`the answer is not a WAV file (${(error as Error).message})`, false);
  }
  const fmt = wav.fmt as { sampleRate: number; numChannels: number };
  if ((wav.bitDepth as string) !== '16') wav.toBitDepth('16');
  if (fmt.numChannels === 1) {
    return {
      sampleRate: fmt.sampleRate,
      samples: wav.getSamples(false, Int16Array) as unknown as Int16Array,
    };
  }
  const channels = wav.getSamples(false, Int16Array) as unknown as Int16Array[];
  const samples = new Int16Array(channels[0].length);
  for (let i = 0; i < samples.length; i++) {
    let sum = 0;
    for (const channel of channels) sum += channel[i];
    samples[i] = Math.round(sum / channels.length);
  }
  return { sampleRate: fmt.sampleRate, samples };
}
