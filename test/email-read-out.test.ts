import assert from 'node:assert/strict';
import { test } from 'node:test';
import { emailAskedFor, readingOutEmail } from '../lib/voice-runtime/email-read-out.js';
import { soundsUnfinished } from '../lib/voice-runtime/unfinished-words.js';

// An email address read out with pauses, as Whisper wrote the local voice's parts of it: each part
// a finished sentence, the address not whole before its domain.

test('an email address read out goes on until its "@" and a domain with a dot: "My email is john.smith." is not the end of it', () => {
  for (const [language, words] of [
    ['en-US', 'My email is john dot smith.'],
    ['en-US', 'My email is john.smith.'],
    ['en-US', 'My email is John.Smith at Gmail.'],
    ['en-US', 'My email address is mary at outlook dot.'],
    ['en-US', 'My e-mail is j.smith@gmail.'],
    ['nb-NO', 'E-postadressen min er ola punktum nordmann.'],
    ['nb-NO', 'E-posten min er ola krøllalfa firma.'],
    ['sv-SE', 'Min mejl är anna punkt svensson snabel-a.'],
    ['de-DE', 'Meine E-Mail-Adresse ist max punkt muster.'],
  ])
    assert.equal(soundsUnfinished(words, language), true, `${language}: ${words}`);
  for (const [language, words] of [
    ['en-US', 'My email is john.smith at gmail.com.'],
    ['en-US', 'My email is John.Smith@gmail.com.'],
    ['en-US', 'My email address is mary at outlook dot com.'],
    ['nb-NO', 'E-postadressen min er ola.nordmann krøllalfa firma punktum no.'],
    // No address is being read out: an email talked about, or named without one.
    ['en-US', 'I do not have an email.'],
    ['en-US', 'My email is the same as before.'],
    ['en-US', 'I will email you at the office.'],
    ['en-US', 'My email is not working at all.'],
    ['en-US', 'My email is still not working at the moment.'],
    ['nb-NO', 'E-posten min er ikke i bruk lenger.'],
    ['en-US', 'Can you send it by email?'],
  ])
    assert.equal(soundsUnfinished(words, language), false, `${language}: ${words}`);
});

test('after the agent asked for an email address, an answer that is only its first part goes on', () => {
  for (const line of [
    'What is your email address?',
    'Please give me your e-mail.',
    'Hva er e-postadressen din?',
  ])
    assert.equal(emailAskedFor(line), true, line);
  for (const line of [
    'I have sent you an email.',
    'Is there anything else?',
    'Your email is on file. Anything else?',
  ])
    assert.equal(emailAskedFor(line), false, line);
  assert.equal(readingOutEmail('It is john dot smith.', true), true);
  assert.equal(readingOutEmail('It is john dot smith.', false), false);
  assert.equal(soundsUnfinished('It is john dot smith.', 'en-US', { emailAsked: true }), true);
  assert.equal(soundsUnfinished('john.smith@gmail.com.', 'en-US', { emailAsked: true }), false);
  assert.equal(soundsUnfinished('Sure, one moment.', 'en-US', { emailAsked: true }), false);
  assert.equal(soundsUnfinished('It does not work at all.', 'en-US', { emailAsked: true }), false);
});
