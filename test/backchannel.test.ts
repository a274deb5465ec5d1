import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isBackchannel } from '../lib/voice-runtime/backchannel.js';

// Which words over the agent mean "go on" (lib/voice-runtime/backchannel.ts), as Whisper writes them.

test('short listener words in the service’s languages are backchannels; nothing heard is one too', () => {
  for (const words of [
    'Mm-hmm.',
    'Uh-huh',
    'Yeah.',
    'Yeah, okay.',
    'OK',
    'I see.',
    'Right, right.',
    'All right.',
    'Ah.',
    'Oh, okay.',
    'Ja.',
    'Jo, jo',
    'Akkurat.',
    'Genau.',
    // The agent's languages' own, as their speakers say them over a talking agent
    'Sounds good.',
    'Okay, perfect.',
    'Ja vel.',
    'Ja, vel.',
    'Greit.',
    'Ja, skjønner.',
    'Stemmer.',
    'Okej.',
    'Ja, visst.',
    'Toppen.',
    'Nå.',
    'Præcis.',
    'Ach so.',
    'Ach, so.',
    'Ja, natürlich.',
    'Super.',
    // Hums as Whisper writes them (the local voice's "Mhm" heard as "M-H-M.", "M.H.M.", "M&M.")
    'Mmmm.',
    'Hmmm',
    'MMMMM',
    'M-H-M.',
    'M.H.M.',
    'M&M.',
    'M.',
    'Mm. Mm. Okay.',
    '',
    ' . ',
  ])
    assert.equal(isBackchannel(words), true, words);
});

test('words that ask or say something are not, nor four listener words in a row', () => {
  for (const words of [
    'Stop.',
    'Wait, what?',
    'Sorry to interrupt',
    'No.',
    'Yeah but what about Sundays',
    'Hello?',
    'Yeah yeah okay sure',
    'All of it, please.',
    'Oh wait.',
    'Hmm, what about Sundays?',
    'M-H-M wait a second',
    // Words that begin a sentence of its own are no listener word alone
    'Vel.',
    'So.',
    'Ja, men vent litt.',
    'Nei.',
    'Greit, men hva med søndag?',
  ])
    assert.equal(isBackchannel(words), false, words);
});
