// Remakes test/fixtures/speech/: caller lines spoken by Debian's espeak-ng, as a phone carries them
// (8 kHz μ-law, raw, no header), trimmed to the speech itself so a test that lays them out on a
// timeline knows where speech really begins and ends.
//   apt-get install -y espeak-ng && node_modules/.bin/node --import tsx scripts/make-speech-fixtures.ts
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import wavefile from 'wavefile';
import { encodeMulaw } from '../lib/audio/mulaw.js';
import { resample } from '../lib/audio/resample.js';

export const SPEECH_FIXTURES = {
  'order-status': 'Hello, I would like to check the status of my order, please.',
  confirmation: 'Yes, that is correct, thank you very much.',
} as const;

/** Below this amplitude (about -40 dBFS) a sample counts as silence when trimming. */
const SILENCE_AMPLITUDE = 300;

function speak(text: string): Int16Array {
  const wav = execFileSync('espeak-ng', ['-v', 'en-us', '-s', '150', '--stdout', text]);
  const file = new wavefile.WaveFile();
  file.fromBuffer(wav);
  const rate = (file.fmt as { sampleRate: number }).sampleRate;
  return resample(Int16Array.from(file.getSamples(false) as Float64Array), rate, 8000);
}

function trim(samples: Int16Array): Int16Array {
  const loud = (sample: number) => Math.abs(sample) > SILENCE_AMPLITUDE;
  const first = samples.findIndex(loud);
  const last = samples.findLastIndex(loud);
  return samples.slice(first, last + 1);
}

const folder = path.join(import.meta.dirname, '..', 'test', 'fixtures', 'speech');
mkdirSync(folder, { recursive: true });
for (const [name, text] of Object.entries(SPEECH_FIXTURES)) {
  const samples = trim(speak(text));
  writeFileSync(path.join(folder, `${name}.ulaw`), encodeMulaw(samples));
  console.log(`${name}.ulaw: ${(samples.length / 8).toFixed(0)} ms "${text}"`);
}
