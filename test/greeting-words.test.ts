import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { answeredByWords } from '../lib/calls/answering-machine.js';
import { menuChoice } from '../lib/voice-runtime/scripted-agent.js';
import {
  judgeFirstWords,
  MENU_PHRASES,
  normalise,
  VOICEMAIL_HINTS,
  VOICEMAIL_PHRASES,
} from '../lib/voicemail/greeting-words.js';

// Greetings as Whisper writes them: with and without diacritics, odd punctuation and casing.
const greetings: Record<keyof typeof VOICEMAIL_PHRASES, string[]> = {
  en: [
    "Hi, you've reached Kari Nordmann. Please leave a message after the beep.",
    'You have reached the voicemail of 555 0123.',
    "Sorry, I can't take your call right now.",
    "Hello, this is Tom. I'm not available at the moment, but I'll get back to you.",
    'The person you are calling is not available. Please try again later.',
    'Thank you for calling Acme Plumbing. Our office is closed; leave your name and number.',
    'Please record your message at the tone.',
    'Welcome to the mailbox of John Smith',
  ],
  no: [
    'Hei, du har kommet til Kari Nordmann. Legg igjen en beskjed etter pipetonen.',
    'Du har ringt til Per. Jeg er ikke tilgjengelig akkurat nå.',
    'Dette er telefonsvareren til Ola Hansen.',
    'Hei, jeg kan ikke ta telefonen nå, legg igjen beskjed så ringer jeg deg tilbake.',
    'Velkommen til mobilsvar. Snakk inn en beskjed etter tonen.',
    'ETTER PIPETONEN KAN DU LEGGE IGJEN EN MELDING',
  ],
  sv: [
    'Hej, du har kommit till Anna Svensson. Lämna ett meddelande efter tonen.',
    'Du har ringt till Erik, jag är inte tillgänglig just nu.',
    'Det här är Annas röstbrevlåda.',
    'det har ar annas rostbrevlada, lamna ett meddelande efter pipet',
    'Hej! Jag kan inte ta telefonen just nu, tala in efter signalen.',
  ],
  da: [
    'Hej, du har ringet til Mette Jensen. Læg en besked efter bippet.',
    'Du har ringet til Lars, jeg er ikke tilgængelig lige nu.',
    'Dette er telefonsvareren for Søren.',
    'Jeg kan ikke tage telefonen lige nu, indtal en besked efter tonen.',
    'hej du har ringet til anne laeg en besked efter tonen',
  ],
  de: [
    'Hallo, Sie haben die Mailbox von Anna Schmidt erreicht.',
    'Bitte hinterlassen Sie eine Nachricht nach dem Signalton.',
    'Der Teilnehmer ist zur Zeit nicht erreichbar.',
    'Hier ist der Anrufbeantworter von Familie Müller. Nach dem Piepton können Sie sprechen.',
    'Du hast Jonas erreicht, hinterlass mir eine Nachricht, ich rufe zurück.',
    'ich bin leider nicht erreichbar, bitte nachricht hinterlassen',
  ],
};

const menus = [
  'For sales press 1, for support press 2.',
  'Thank you for calling. To speak to an agent, press zero. For opening hours, press star.',
  'Velkommen til kundeservice. For bestilling, trykk 1. For faktura, trykk 2.',
  'För att tala med växeln, tryck 1.',
  'Tryk 1 for åbningstider, tryk 2 for support.',
  'Für Fragen zu Ihrer Rechnung drücken Sie die 1. Für alles andere drücken Sie die 2.',
  'If you know your party’s extension, dial it now, or to leave a message in the general mailbox, press 9, for the operator press 0.',
];

const people = [
  'Hello?',
  'Hi, this is Kari.',
  'Ja, hallo.',
  'Hej, det är Anna.',
  'Hallo, Kari her.',
  'Hej, det er Mette.',
  'Guten Tag, Müller am Apparat.',
  'Yes, speaking, who is this?',
  'Hello, yes, I can take your call now.',
  "I'm not available on Friday but Monday works.",
  "You've reached Acme support, this is Tom, how can I help you?",
  'Hallo, ich bin gerade im Auto, ich rufe dich gleich zurück.',
  'Ja, det er Per, jeg er ikke tilgjengelig på fredag men mandag går fint.',
  '',
  // Long and without a phrase: length is the caller's to weigh, not this module's.
  'Yeah hi sorry I was just out in the garden and ran in to grab the phone so who is this and what do you want from me today',
];

for (const [language, lines] of Object.entries(greetings)) {
  test(`voicemail greetings in ${language} are 'machine'`, () => {
    assert.ok(lines.length >= 5);
    for (const line of lines) assert.equal(judgeFirstWords(line), 'machine', line);
  });
}

test("phone menus are 'menu'", () => {
  for (const line of menus) assert.equal(judgeFirstWords(line), 'menu', line);
});

test("people answering are 'human'", () => {
  assert.ok(people.length >= 12);
  for (const line of people) assert.equal(judgeFirstWords(line), 'human', line);
});

test('one "press N" in a greeting leaves it a greeting; two make a menu', () => {
  assert.equal(judgeFirstWords('Please leave a message after the tone, or press 1 to page me.'), 'machine');
  assert.equal(judgeFirstWords('Press 1 to leave a message, press 2 to page me.'), 'menu');
  assert.equal(judgeFirstWords('Drücken Sie bitte die Taste 5.'), 'menu');
});

test('a hint needs corroboration; a live cue outweighs one phrase but not two', () => {
  assert.equal(judgeFirstWords("I'm not available"), 'human');
  assert.equal(judgeFirstWords("I'm not available right now"), 'machine');
  assert.equal(judgeFirstWords("I'm not available, I'll call you back"), 'machine');
  assert.equal(judgeFirstWords("You've reached Kari"), 'machine');
  assert.equal(judgeFirstWords("You've reached Acme, how may I help you?"), 'human');
  assert.equal(judgeFirstWords("You're speaking to the voicemail of Kari."), 'machine');
  assert.equal(judgeFirstWords('Du har kommet til Acme, hva kan jeg hjelpe deg med?'), 'human');
  assert.equal(
    judgeFirstWords('Du har kommet til Acme, legg igjen en beskjed, hva kan jeg hjelpe med?'),
    'machine',
  );
  assert.equal(
    judgeFirstWords('Ich bin gerade nicht am Apparat, hinterlassen Sie eine Nachricht.'),
    'machine',
  );
});

test('normalise drops case, punctuation and diacritics', () => {
  assert.equal(
    normalise('  Röstbrevlåda!  Læg, Søren — Straße; you’ve '),
    'rostbrevlada laeg soren strasse you ve',
  );
});

test('every language has phrases, hints and menu words', () => {
  for (const language of ['en', 'no', 'sv', 'da', 'de'] as const) {
    assert.ok(VOICEMAIL_PHRASES[language].length >= 5, language);
    assert.ok(VOICEMAIL_HINTS[language].length >= 1, language);
    assert.ok(MENU_PHRASES[language].global, language);
  }
});

describe('answered_by from the first words (lib/calls/answering-machine.ts)', () => {
  test('a menu is unknown however long; a voicemail phrase or 4 s unbroken is a machine; else a person', () => {
    const long = 'For sales press 1, for support press 2, for billing press 3, for anything else press 4.';
    assert.equal(answeredByWords({ text: long, seconds: 7 }), 'unknown');
    assert.equal(answeredByWords({ text: 'Please leave a message after the tone.', seconds: 2 }), 'machine');
    assert.equal(
      answeredByWords({ text: 'Hello, yes, this is Kari, who is it and what is it about?', seconds: 4 }),
      'machine',
    );
    assert.equal(answeredByWords({ text: 'Hello, Kari speaking.', seconds: 1.2 }), 'human');
  });
});

test('the scripted agent takes a menu’s first choice, written as a digit or as a word', () => {
  assert.equal(menuChoice('For sales, press 1. For support, press 2.'), '1');
  // Whisper writes "one" or "1" depending on how the audio was cut: both are the key 1.
  assert.equal(menuChoice('For sales press one, for support press two.'), '1');
  assert.equal(menuChoice('Press Zero for the operator.'), '0');
  assert.equal(menuChoice('Thanks for calling Acme, how can I help?'), null);
  assert.equal(menuChoice('I pressed the button'), null);
});
