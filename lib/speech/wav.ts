import wavefile from 'wavefile';
import { type Pcm, SpeechError } from './speech-ports.js';

// WAV in and out of the speech ports, through `wavefile` (no hand-written RIFF code).

/** `audio` as a 16-bit mono WAV file. */
export function encodeWav(audio: Pcm): Uint8Array {
  const wav = new wavefile.WaveFile();
  wav.fromScratch(1, audio.sampleRate, '16', audio.samples);
  return wav.toBuffer();
}

/** A WAV file as mono 16-bit PCM: other depths and G.711 are converted, several channels averaged. */
export function decodeWav(bytes: Uint8Array): Pcm {
  try {
    return monoPcm(bytes);
  } catch (error) {
    throw new SpeechError(`the answer is not a WAV file of PCM audio (${(error as Error).message})`, false);
  }
}

function monoPcm(bytes: Uint8Array): Pcm {
  const wav = new wavefile.WaveFile(bytes);
  const format = (wav.fmt as { audioFormat: number }).audioFormat;
  // G.711 inside a WAV (format 6 A-law, 7 μ-law) is decoded; any other depth converted to 16 bits.
  if (format === 6) wav.fromALaw('16');
  else if (format === 7) wav.fromMuLaw('16');
  else if ((wav.bitDepth as string) !== '16') wav.toBitDepth('16');
  const { sampleRate, numChannels } = wav.fmt as { sampleRate: number; numChannels: number };
  if (numChannels === 1)
    return { sampleRate, samples: wav.getSamples(false, Int16Array) as unknown as Int16Array };
  const channels = wav.getSamples(false, Int16Array) as unknown as Int16Array[];
  const samples = new Int16Array(channels[0].length);
  for (let i = 0; i < samples.length; i++) {
    let sum = 0;
    for (const channel of channels) sum += channel[i];
    samples[i] = Math.round(sum / channels.length);
  }
  return { sampleRate, samples };
}
