import assert from 'node:assert/strict';
import { test } from 'node:test';
import { numberAskedFor, soundsUnfinished } from '../lib/voice-runtime/unfinished-words.js';

// Which words at a caller's pause mean they will go on (lib/voice-runtime/unfinished-words.ts), as
// Whisper wrote them on the turn-taking bench (bench/turn-taking.ts): the first part of a sentence
// said in two, and numbers read out in groups, against the same sentences said whole.

test('a sentence cut where it goes on sounds unfinished: no closing mark, "…" or "-", or a word that leads on', () => {
  for (const words of [
    'I would like to book a table for',
    'Could you send me the...',
    'Be Heating in my…',
    'Could you check if-',
    'I was wondering if...',
    'My name is',
    'We are three adults and',
    'I am calling about.',
    'I forgot my.',
    'I would like a.',
    'I would like to, um.',
    'Um.',
    'Let me see, uh.',
    'Jeg vil gjerne, eh.',
    'Ich möchte, äh.',
    'Is it for the.',
    'Jeg vil gjerne bestille et bord til.',
    'Ich möchte einen Tisch für.',
  ])
    assert.equal(
      soundsUnfinished(
        words,
        words.startsWith('Jeg') ? 'nb-NO' : words.startsWith('Ich') ? 'de-DE' : 'en-US',
      ),
      true,
      words,
    );
});

test('a number read out in groups, of 3 to 7 digits, or after "number", "code"…, sounds unfinished; a whole phone number does not', () => {
  for (const words of [
    'My number is 9123',
    'It is 4 7.',
    'It is 4.7.',
    'It is 5-5.',
    'it is 47991.',
    'The customer number is 1, 2, 3, 4.',
    'The customer number is one two.',
    'The code is 336-99.',
    'The code is 33.',
    'My card ends in 1.',
    'Kundenummeret er 12.',
    'Mitt nummer er ni en to.',
    'It is forty-seven, ninety-nine.',
    'Nummeret er førtisju nittini.',
  ])
    assert.equal(soundsUnfinished(words, /^(Mitt|Kunde|Nummeret)/.test(words) ? 'nb' : 'en'), true, words);
  for (const words of ['Call me 1415550192.', 'My number is 141 555 0192.'])
    assert.equal(soundsUnfinished(words, 'en-US'), false, words);
  for (const words of ['My number is 912345678.', 'It is 47991234.'])
    assert.equal(soundsUnfinished(words, 'nb-NO'), false, words);
});

test('a whole phone number has as many digits as one where the agent’s language is spoken, more after a plus', () => {
  // [language, the number up to a pause before its last group, the whole number]
  for (const [language, partly, whole] of [
    ['nb-NO', 'Det er 91 23 45.', 'Det er 91 23 45 67.'],
    ['nb-NO', 'Det er +47 91 23 45.', 'Det er +47 91 23 45 67.'],
    ['nb-NO', 'Det er pluss førtisju, 91 23 45.', 'Det er pluss førtisju, 91 23 45 67.'],
    ['da-DK', 'Det er 20 12 34.', 'Det er 20 12 34 56.'],
    ['sv-SE', 'Det är 070 123 45.', 'Det är 070 123 45 67.'],
    ['sv', 'Det är 070-123 45.', 'Det är 070-123 45 67.'],
    ['sv-SE', 'Det är +46 70 123 45.', 'Det är +46 70 123 45 67.'],
    ['de-DE', 'Sie ist 0151 1234.', 'Sie ist 0151 1234 5678.'],
    ['de', 'Sie ist 0170 123 45.', 'Sie ist 0170 123 45 678.'],
    // Any country libphonenumber knows (a French agent on hosted speech): "06 12 34 56 78".
    ['fr-FR', 'C’est le 06 12 34 56.', 'C’est le 06 12 34 56 78.'],
    ['en-US', 'It is 555 123 45.', 'It is 555 123 4567.'],
    ['en-US', 'It is +1 555 123 45.', 'It is +1 555 123 45 67.'],
    ['en-GB', 'It is 07700 900.', 'It is 07700 900 123.'],
    ['en-GB', 'It is 07700 900 12.', 'It is 07700 900 123.'],
    ['en', 'It is 555 12.', 'It is 555 123 45.'],
    // A digit said twice or thrice: "double five" is two digits.
    [
      'en-GB',
      'It is oh seven seven double oh, nine double oh.',
      'It is oh seven seven double oh, nine double oh, one two three.',
    ],
    ['en-GB', 'It is 07 triple 7, 900.', 'It is 07 triple 7, 900 123.'],
    [
      'en-GB',
      'It is o seven seven double o, nine double o.',
      'It is o seven seven double o, nine double o, 123.',
    ],
  ]) {
    assert.equal(soundsUnfinished(partly, language), true, `${language}: ${partly}`);
    assert.equal(soundsUnfinished(whole, language), false, `${language}: ${whole}`);
  }
  // A length the agent said wins over the country's.
  assert.equal(soundsUnfinished('It is 1234.', 'en-US', { numberAsked: { digits: 4 } }), false);
  // "Plus" that is no country code: "two plus two" is a sum, as before.
  assert.equal(soundsUnfinished('It is two plus two.', 'en-US'), false);
});

test('a word spelled out or a code with letters sounds unfinished at each pause: its length is unknown', () => {
  for (const [language, words] of [
    ['en-US', 'It is spelled S, M, I.'],
    ['en-US', 'S-M-I.'],
    ['en-US', 'My name is Smith. S-M-I-T-H.'],
    ['en-US', 'The booking reference is A B 4.'],
    ['en-US', 'It is X, 7.'],
    ['en-US', 'The reference is X7Q.'],
    ['en-US', 'It is AB12.'],
    ['nb-NO', 'Det staves Ø, S, T.'],
    ['sv-SE', 'Det stavas L, U, N, D.'],
    ['de-DE', 'Das buchstabiert man M.'],
  ])
    assert.equal(soundsUnfinished(words, language), true, `${language}: ${words}`);
  // A letter that is a word, a grade, a plan, a vitamin: no spelling.
  for (const words of [
    'Me and I.',
    'I got an A.',
    'We will take plan A.',
    'We will take plan B.',
    'Vitamin D.',
    'Is it A or B?',
    'In the U.S.',
    'I will be there at 10 a.m.',
    'It is on the 4th.',
    'Come at 10am.',
    'I drive a BMW X5.',
  ])
    assert.equal(soundsUnfinished(words, 'en-US'), false, words);
  // Asked to spell, one letter at a pause is the first of them; a name said whole is an answer.
  const spell = numberAskedFor('Could you spell your last name, please?', 'en-US');
  assert.deepEqual(spell, {});
  assert.deepEqual(numberAskedFor('Kan du stave etternavnet ditt?', 'nb-NO'), {});
  assert.equal(numberAskedFor('I live in Stavanger.', 'en-US'), null);
  assert.equal(soundsUnfinished('S.', 'en-US', { numberAsked: spell }), true);
  assert.equal(soundsUnfinished('Smith.', 'en-US', { numberAsked: spell }), false);
  // The agent said its length: that many characters are the whole code.
  const code = numberAskedFor('What is your 6-digit code?', 'en-US');
  assert.equal(soundsUnfinished('It is A B 4.', 'en-US', { numberAsked: code }), true);
  assert.equal(soundsUnfinished('It is A B 4 7 X 2.', 'en-US', { numberAsked: code }), false);
});

test('whole sentences do not, nor a question that ends on its preposition, a time or a count, or no words at all', () => {
  for (const words of [
    'I would like to book a table for two on Friday.',
    'Can you tell me when the store opens tomorrow?',
    'Yes, Tuesday at 10 works for me.',
    'I need a taxi to the airport at 6.',
    'We would like two.',
    'We are fifteen.',
    'I am twenty-one.',
    'Can we meet at 10.30?',
    'I am shopping for 2.',
    'What is it for?',
    'Who am I talking to?',
    'Hold on.',
    'Thank you. That is everything I needed!',
    '"Cancel it."',
    'Jeg vil gjerne bestille et bord.',
    '',
  ])
    assert.equal(soundsUnfinished(words, words.startsWith('Jeg') ? 'nb-NO' : 'en-US'), false, words);
  assert.equal(soundsUnfinished('Hvem snakker jeg med?', 'nb-NO'), false);
  assert.equal(soundsUnfinished('Jeg har mistet kortet mitt.', 'nb-NO'), false);
  assert.equal(soundsUnfinished('Jeg ringer fordi.', 'nb-NO'), true);
  // Listener words are no fillers; "er" is one in English only (elsewhere it is "is").
  for (const words of ['Uh-huh.', 'Ah, I see.']) assert.equal(soundsUnfinished(words, 'en-US'), false, words);
  assert.equal(soundsUnfinished('Ja, det er.', 'nb-NO'), false);
  // A language without a list of its own is read with English's.
  assert.equal(soundsUnfinished('Je voudrais the', 'fr-FR'), true);
});

test('after the agent asked for a number, a short group of digits goes on ("It is five." of "It is five five, nine one"); a whole one does not', () => {
  for (const line of [
    'What is your phone number?',
    'Thanks. Could you read me the booking reference?',
    'Please give me your customer number.',
    'Hva er kundenummeret ditt?',
    'Oppgi kundenummeret ditt.',
    'Wie lautet Ihre Kundennummer?',
  ])
    assert.deepEqual(numberAskedFor(line, 'en-US'), {}, line);
  for (const line of [
    'Your booking number is 4 5 6.',
    'Is there anything else I can help you with?',
    'I have noted the number. How many people?',
    '',
  ])
    assert.equal(numberAskedFor(line, 'en-US'), null, line);
  for (const words of ['It is five.', 'Try 6.', 'Try sixty-one.', 'It starts with four than eight.', 'Five.'])
    assert.equal(soundsUnfinished(words, 'en-US', { numberAsked: {} }), true, words);
  assert.equal(soundsUnfinished('Det er ni.', 'nb-NO', { numberAsked: {} }), true);
  assert.equal(soundsUnfinished('Det er ni.', 'nb-NO'), false);
  for (const words of ['It is five.', 'Try 6.', 'It starts with four than eight.'])
    assert.equal(soundsUnfinished(words, 'en-US'), false, `${words} (asked for nothing)`);
  for (const words of ['It is 1415550192.', 'I do not have one.', 'Just a moment.'])
    assert.equal(soundsUnfinished(words, 'en-US', { numberAsked: {} }), false, words);
  assert.equal(soundsUnfinished('Det er 91234567.', 'nb-NO', { numberAsked: {} }), false);
});

test('a line that says how many digits the number has ("your four-digit PIN", "de fire siste sifrene") asks for that many', () => {
  const asked: Array<[string, number]> = [
    ['Please enter your 4-digit PIN.', 4],
    ['What are the last four digits of your card?', 4],
    ['Could you read me the six digit code we sent you?', 6],
    ['What is your 10 digit phone number?', 10],
    ['Hva er de fire siste sifrene i kortnummeret?', 4],
    ['Oppgi den firesifrede koden.', 4],
    ['Hva er den 6-sifrede koden?', 6],
    ['Vad är de fyra sista siffrorna i kortnumret?', 4],
    ['Uppge din fyrsiffriga kod.', 4],
    ['Hvad er den firecifrede kode?', 4],
    ['Wie lautet Ihre vierstellige PIN?', 4],
    ['Bitte nennen Sie die letzten vier Ziffern Ihrer Karte.', 4],
  ];
  for (const [line, digits] of asked) assert.deepEqual(numberAskedFor(line, 'en-US'), { digits }, line);
  // A count that is not the number's length: asked for a number, of no length said.
  assert.deepEqual(numberAskedFor('I sent two codes. What is the code?', 'en-US'), {});
  assert.deepEqual(numberAskedFor('Twelve of us are here. What is your number?', 'en-US'), {});
  assert.deepEqual(numberAskedFor('Please enter your number one digit at a time.', 'en-US'), {});
  // It says how many digits, but asks for nothing.
  assert.equal(numberAskedFor('Your PIN has four digits.', 'en-US'), null);
});

test('asked for a number of one length where the agent’s language is spoken (a ZIP code, a fødselsnummer), that many end the turn at the pause', () => {
  // [language, the agent's line, digits]
  const kinds: Array<[string, string, number]> = [
    ['en-US', 'What is your ZIP code?', 5],
    ['en-US', 'Could you give me your social security number?', 9],
    ['nb-NO', 'Hva er postnummeret ditt?', 4],
    ['nb-NO', 'Kan jeg få fødselsnummeret ditt, takk?', 11],
    ['nb-NO', 'Hva er organisasjonsnummeret?', 9],
    ['sv-SE', 'Vad är ditt personnummer?', 10],
    ['da-DK', 'Hvad er dit CPR-nummer?', 10],
    ['de-DE', 'Wie lautet Ihre Postleitzahl?', 5],
  ];
  for (const [language, line, digits] of kinds)
    assert.deepEqual(numberAskedFor(line, language), { digits }, line);
  const zip = numberAskedFor('What is your ZIP code?', 'en-US');
  assert.equal(soundsUnfinished('It is 9 0 2 1 0.', 'en-US', { numberAsked: zip }), false);
  assert.equal(soundsUnfinished('It is 9 0 2.', 'en-US', { numberAsked: zip }), true);
  const fnr = numberAskedFor('Kan jeg få fødselsnummeret ditt?', 'nb-NO');
  assert.equal(soundsUnfinished('Det er 010190 123.', 'nb-NO', { numberAsked: fnr }), true);
  assert.equal(soundsUnfinished('Det er 010190 12345.', 'nb-NO', { numberAsked: fnr }), false);
  // A length the line says wins; a kind with no one length there (Britain's postcodes), or a
  // language with no country, leaves the number's end unknown.
  assert.deepEqual(numberAskedFor('What are the last four digits of your social security number?', 'en-US'), {
    digits: 4,
  });
  assert.deepEqual(numberAskedFor('What is your postcode?', 'en-GB'), {});
  assert.deepEqual(numberAskedFor('What is your ZIP code?', 'en'), {});
});

test('asked for four digits, four end the turn ("1234.", "12 34.", "twelve thirty-four."); fewer go on, as eight of ten do', () => {
  const pin = numberAskedFor('What are the last four digits of your card?', 'en-US');
  for (const words of [
    '1234.',
    'It is 12 34.',
    'Twelve thirty-four.',
    'Four five six seven.',
    'It is 1-2-3-4.',
  ])
    assert.equal(soundsUnfinished(words, 'en-US', { numberAsked: pin }), false, words);
  for (const words of ['It is five.', '12.', 'Four five six.', 'Twelve.'])
    assert.equal(soundsUnfinished(words, 'en-US', { numberAsked: pin }), true, words);
  // The same "1234." asked for a number of no length said: it may go on (a longer number in groups).
  assert.equal(soundsUnfinished('1234.', 'en-US', { numberAsked: {} }), true);
  assert.equal(
    soundsUnfinished('Det er 4 7 1 2.', 'nb-NO', {
      numberAsked: numberAskedFor('Hva er de fire siste sifrene?', 'nb-NO'),
    }),
    false,
  );
  assert.equal(soundsUnfinished('I do not have one.', 'en-US', { numberAsked: pin }), false);
  // Asked for ten digits, eight are not yet the whole of it (asked for no length, they are).
  const phone = numberAskedFor('What is your ten-digit phone number?', 'en-US');
  assert.equal(soundsUnfinished('It is 555 123 45.', 'en-US', { numberAsked: phone }), true);
  assert.equal(soundsUnfinished('It is 9123 4567.', 'nb-NO', { numberAsked: {} }), false);
  assert.equal(soundsUnfinished('It is 555 123 4567.', 'en-US', { numberAsked: phone }), false);
});
