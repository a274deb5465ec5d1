import alawmulaw from 'alawmulaw';
import { resample } from '../lib/audio/resample.js';
import { OpenAiSpeechToText } from '../lib/speech/openai-speech-to-text.js';
import { OpenAiTextToSpeech } from '../lib/speech/openai-text-to-speech.js';
import { startLocalSpeechServer } from '../scripts/local-speech-server.js';

// The local speech's languages, round trip (docs/voice.md, "Languages"): 20 sentences a language,
// of the kind a caller says, each spoken by the local voice of its language (Piper joe for English,
// eSpeak NG for the others), carried over the phone line (8 kHz μ-law) and transcribed in that
// language (Whisper tiny.en, or multilingual Whisper base). Reported per language: the word error
// rate (word-level edit distance over the reference's words, case and punctuation ignored) and the
// transcription's time p50. One JSON line a language, then one with them all.
//
//   npm run bench -- languages

const SENTENCES: Record<string, { voice: string; lines: string[] }> = {
  'en-US': {
    voice: 'joe',
    lines: [
      'I would like to book an appointment for tomorrow.',
      'Can you call me back at three o clock?',
      'My customer number is four five six seven.',
      'Thank you very much for your help.',
      'I need to change the time of my booking.',
      'Is the office open on Saturday?',
      'Please send me a confirmation by email.',
      'I am calling about my last invoice.',
      'Could I talk to a real person please?',
      'The delivery did not arrive yesterday.',
      'What time do you close today?',
      'I want to cancel my subscription.',
      'Yes, that works for me.',
      'No, I do not have the reference number.',
      'My name is Kari Nordmann.',
      'Can you repeat that please?',
      'I live in Oslo near the central station.',
      'How much does the service cost each month?',
      'I will be there in ten minutes.',
      'That is all, goodbye.',
    ],
  },
  'nb-NO': {
    voice: 'espeak-nb',
    lines: [
      'Jeg vil gjerne bestille en time i morgen.',
      'Kan du ringe meg tilbake klokken tre?',
      'Kundenummeret mitt er fire fem seks sju.',
      'Tusen takk for hjelpen.',
      'Jeg må endre tidspunktet for bestillingen.',
      'Er kontoret åpent på lørdag?',
      'Send meg en bekreftelse på e-post.',
      'Jeg ringer om den siste fakturaen.',
      'Kan jeg få snakke med et menneske?',
      'Pakken kom ikke i går.',
      'Når stenger dere i dag?',
      'Jeg vil si opp abonnementet mitt.',
      'Ja, det passer fint for meg.',
      'Nei, jeg har ikke referansenummeret.',
      'Jeg heter Kari Nordmann.',
      'Kan du gjenta det?',
      'Jeg bor i Oslo ved sentralstasjonen.',
      'Hva koster tjenesten i måneden?',
      'Jeg er der om ti minutter.',
      'Det var alt, ha det bra.',
    ],
  },
  'sv-SE': {
    voice: 'espeak-sv',
    lines: [
      'Jag vill boka en tid i morgon.',
      'Kan du ringa mig tillbaka klockan tre?',
      'Mitt kundnummer är fyra fem sex sju.',
      'Tack så mycket för hjälpen.',
      'Jag behöver ändra tiden för min bokning.',
      'Är kontoret öppet på lördag?',
      'Skicka mig en bekräftelse via e-post.',
      'Jag ringer om min senaste faktura.',
      'Kan jag få prata med en människa?',
      'Paketet kom inte i går.',
      'När stänger ni i dag?',
      'Jag vill säga upp mitt abonnemang.',
      'Ja, det passar bra för mig.',
      'Nej, jag har inte referensnumret.',
      'Jag heter Karin Andersson.',
      'Kan du upprepa det?',
      'Jag bor i Stockholm nära centralstationen.',
      'Vad kostar tjänsten per månad?',
      'Jag är där om tio minuter.',
      'Det var allt, hej då.',
    ],
  },
  'da-DK': {
    voice: 'espeak-da',
    lines: [
      'Jeg vil gerne bestille en tid i morgen.',
      'Kan du ringe mig tilbage klokken tre?',
      'Mit kundenummer er fire fem seks syv.',
      'Mange tak for hjælpen.',
      'Jeg skal ændre tidspunktet for min booking.',
      'Er kontoret åbent på lørdag?',
      'Send mig en bekræftelse på e-mail.',
      'Jeg ringer om min sidste faktura.',
      'Kan jeg tale med et menneske?',
      'Pakken kom ikke i går.',
      'Hvornår lukker I i dag?',
      'Jeg vil opsige mit abonnement.',
      'Ja, det passer fint for mig.',
      'Nej, jeg har ikke referencenummeret.',
      'Jeg hedder Karen Jensen.',
      'Kan du gentage det?',
      'Jeg bor i København tæt på hovedbanegården.',
      'Hvad koster tjenesten om måneden?',
      'Jeg er der om ti minutter.',
      'Det var alt, farvel.',
    ],
  },
  'de-DE': {
    voice: 'espeak-de',
    lines: [
      'Ich möchte morgen einen Termin buchen.',
      'Können Sie mich um drei Uhr zurückrufen?',
      'Meine Kundennummer ist vier fünf sechs sieben.',
      'Vielen Dank für Ihre Hilfe.',
      'Ich muss die Zeit meiner Buchung ändern.',
      'Ist das Büro am Samstag geöffnet?',
      'Bitte schicken Sie mir eine Bestätigung per E-Mail.',
      'Ich rufe wegen meiner letzten Rechnung an.',
      'Kann ich bitte mit einem Menschen sprechen?',
      'Das Paket ist gestern nicht angekommen.',
      'Wann schließen Sie heute?',
      'Ich möchte mein Abonnement kündigen.',
      'Ja, das passt mir gut.',
      'Nein, ich habe die Referenznummer nicht.',
      'Ich heiße Anna Schmidt.',
      'Können Sie das bitte wiederholen?',
      'Ich wohne in Berlin in der Nähe vom Hauptbahnhof.',
      'Was kostet der Dienst im Monat?',
      'Ich bin in zehn Minuten da.',
      'Das war alles, auf Wiedersehen.',
    ],
  },
};

const wordsOf = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** Word-level edit distance between the reference's words and those heard. */
function editDistance(reference: string[], heard: string[]): number {
  let previous = Array.from({ length: heard.length + 1 }, (_, j) => j);
  for (let i = 1; i <= reference.length; i++) {
    const row = [i];
    for (let j = 1; j <= heard.length; j++) {
      const substitution = previous[j - 1] + (reference[i - 1] === heard[j - 1] ? 0 : 1);
      row.push(Math.min(substitution, previous[j] + 1, row[j - 1] + 1));
    }
    previous = row;
  }
  return previous[heard.length];
}

/** The line as the phone line carries it: 8 kHz μ-law, decoded again. */
const overPhoneLine = (samples: Int16Array, rate: number) =>
  alawmulaw.mulaw.decode(alawmulaw.mulaw.encode(resample(samples, rate, 8000)));

const server = await startLocalSpeechServer({ log: (line) => process.stderr.write(`${line}\n`) });
try {
  const endpoint = (model: string) => ({ url: server.url, apiKey: undefined, model, timeoutMs: 30_000 });
  const tts = new OpenAiTextToSpeech(endpoint('tts-1'));
  const stt = new OpenAiSpeechToText(endpoint('whisper-1'));
  const all: Record<string, number> = {};
  for (const [language, { voice, lines }] of Object.entries(SENTENCES)) {
    let errors = 0;
    let words = 0;
    const times: number[] = [];
    for (const line of lines) {
      const spoken = await tts.synthesize(line, { voice });
      const samples = overPhoneLine(spoken.samples, spoken.sampleRate);
      const started = performance.now();
      const heard = await stt.transcribe({ sampleRate: 8000, samples }, { language });
      times.push(performance.now() - started);
      const reference = wordsOf(line);
      errors += editDistance(reference, wordsOf(heard));
      words += reference.length;
      process.stderr.write(`${language}: ${line} -> ${heard}\n`);
    }
    times.sort((a, b) => a - b);
    const wer = Math.round((errors / words) * 1000) / 1000;
    all[language] = wer;
    console.log(
      JSON.stringify({
        bench: 'languages',
        language,
        voice,
        sentences: lines.length,
        words,
        word_error_rate: wer,
        transcribe_p50_ms: Math.round(times[Math.floor(times.length / 2)]),
      }),
    );
  }
  console.log(JSON.stringify({ bench: 'languages', word_error_rate: all }));
} finally {
  await server.stop();
}
