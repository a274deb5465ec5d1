// Sample-rate conversion through wave-resampler: cubic interpolation behind a zero-phase (forward and
// backward) 16th-order Butterworth low-pass at the lower rate's Nyquist frequency, so downsampling
// (text-to-speech at 22,050 Hz to the phone's 8 kHz) does not fold high tones into the band and
// upsampling (8 kHz to speech-to-text's 16 kHz) adds no images above 4 kHz.
import waveResampler from 'wave-resampler';

/** `samples` at `fromRate` Hz as 16-bit PCM at `toRate` Hz (length scaled by the ratio). */
export function resample(samples: Int16Array, fromRate: number, toRate: number): Int16Array {
  if (fromRate === toRate) return samples.slice();
  // A copy: wave-resampler filters its input in place when downsampling.
  const input = Float64Array.from(samples);
  const output = waveResampler.resample(input, fromRate, toRate, {
    method: 'cubic',
    LPF: true,
    LPFType: 'IIR',
  });
  const result = new Int16Array(output.length);
  for (let i = 0; i < output.length; i++) {
    result[i] = Math.max(-32768, Math.min(32767, Math.round(output[i])));
  }
  return result;
}
