// The answers the answering-machine bench dials (bench/amd.ts): voicemail greetings, long and
// short, with and without a beep, in English, Norwegian, Swedish, Danish and German; and people
// picking up, most of them saying something first, some silent. They sit behind numbers POST /calls
// can never dial (+999 is a spare country code, refused by every dialing check), so no call of an
// integrator ever meets them: `+99901NNN` is machine NNN, `+99902NNN` person NNN.
// Deterministic data only: used inside the simulator's workflow.

export interface BenchMachine {
  greeting: string;
  beep: boolean;
}

export const BENCH_MACHINES: BenchMachine[] = [
  // English
  {
    greeting:
      "Hi, you have reached Kari Nordmann. I can't take your call right now, please leave a message after the tone.",
    beep: true,
  },
  { greeting: "You've reached the voicemail of 555 0123. Please leave a message.", beep: true },
  { greeting: 'Hello, this is Tom. Leave a message.', beep: true },
  {
    greeting: 'The person you are calling is not available. Please record your message after the tone.',
    beep: true,
  },
  {
    greeting:
      "Hi, it's Anna, I'm not available right now. Leave your name and number and I'll call you back.",
    beep: false,
  },
  {
    greeting: 'Thanks for calling Acme Dental. Our office is closed. Please leave a message after the beep.',
    beep: true,
  },
  { greeting: "Sorry I missed your call. Leave me a message and I'll get back to you.", beep: true },
  { greeting: "Hey, you've reached Mike. You know what to do.", beep: true },
  { greeting: 'The mailbox of John Smith is full.', beep: false },
  {
    greeting: 'Welcome to the voicemail service. The subscriber you are trying to reach is unavailable.',
    beep: false,
  },
  // Norwegian
  { greeting: 'Hei, du har kommet til Kari Nordmann. Legg igjen en beskjed etter pipetonen.', beep: true },
  {
    greeting: 'Du har ringt til Ola. Jeg kan ikke ta telefonen akkurat nå, legg igjen en beskjed.',
    beep: true,
  },
  { greeting: 'Hei, dette er mobilsvaret til Per. Snakk inn en beskjed etter pipetonen.', beep: true },
  { greeting: 'Personen du ringer er ikke tilgjengelig akkurat nå.', beep: false },
  { greeting: 'Hei, det er Lise. Legg igjen en melding, så ringer jeg deg tilbake.', beep: true },
  {
    greeting: 'Takk for at du ringer Tannlegen. Vi har stengt. Legg igjen en beskjed etter tonen.',
    beep: true,
  },
  { greeting: 'Telefonsvareren til familien Hansen. Legg inn en beskjed.', beep: true },
  { greeting: 'Du har kommet til talepostkassen til 900 12 345.', beep: false },
  // Swedish
  { greeting: 'Hej, du har kommit till Anna. Lämna ett meddelande efter tonen.', beep: true },
  { greeting: 'Hej, det här är Erik. Jag kan inte svara just nu, lämna ett meddelande.', beep: true },
  { greeting: 'Du har ringt till röstbrevlådan för 070 123 45 67.', beep: true },
  { greeting: 'Hej, det är Sara. Lämna ett meddelande efter pipet så ringer jag upp.', beep: true },
  { greeting: 'Tack för att du ringer. Vi har stängt, lämna ett meddelande efter tonen.', beep: true },
  { greeting: 'Abonnenten du söker är inte tillgänglig just nu.', beep: false },
  { greeting: 'Detta är Johans telefonsvarare. Lämna ett meddelande.', beep: true },
  { greeting: 'Hej, du har kommit till Lars röstbrevlåda.', beep: false },
  // Danish
  { greeting: 'Hej, du har ringet til Mette. Læg en besked efter bippet.', beep: true },
  { greeting: 'Du har ringet til Søren. Jeg kan ikke tage telefonen lige nu, læg en besked.', beep: true },
  { greeting: 'Hej, det er Jens. Indtal en besked efter tonen.', beep: true },
  { greeting: 'Den du ringer til er ikke tilgængelig lige nu.', beep: false },
  { greeting: 'Tak fordi du ringer. Vi har lukket, læg venligst en besked.', beep: true },
  { greeting: 'Dette er telefonsvareren for familien Jensen.', beep: false },
  { greeting: 'Du har ringet til Annes telefonsvarer. Læg en besked.', beep: true },
  // German
  {
    greeting:
      'Hallo, Sie haben Anna Schmidt erreicht. Bitte hinterlassen Sie eine Nachricht nach dem Signalton.',
    beep: true,
  },
  { greeting: 'Dies ist die Mailbox von 0171 1234567. Bitte sprechen Sie nach dem Piepton.', beep: true },
  { greeting: 'Hallo, hier ist der Anrufbeantworter von Familie Müller.', beep: true },
  { greeting: 'Der gewünschte Gesprächspartner ist im Moment nicht erreichbar.', beep: false },
  {
    greeting:
      'Guten Tag, Sie haben die Praxis Dr. Weber erreicht. Wir sind momentan nicht erreichbar. Hinterlassen Sie eine Nachricht.',
    beep: true,
  },
  {
    greeting: 'Hallo, ich bin gerade nicht da. Hinterlassen Sie mir eine Nachricht nach dem Piepton.',
    beep: true,
  },
  { greeting: 'Sie haben die Mailbox von Thomas erreicht.', beep: false },
];

/** A person picking up: what they say at once (null: nothing, they wait to hear who calls). */
export const BENCH_PEOPLE: (string | null)[] = [
  // English
  'Hello?',
  'Hello, Kari speaking.',
  'Yes, hello?',
  'Hi, this is Tom.',
  'Hello, who is this?',
  'Good morning, Acme Dental, how can I help you?',
  'Yeah?',
  "Hello, this is Anna, what's it about?",
  "You've reached Acme support, Lisa speaking.",
  // Norwegian
  'Hallo?',
  'Ja, hallo?',
  'Hei, det er Kari.',
  'Kari Nordmann.',
  'Ja, det er Ola.',
  'Hei, hvem er det?',
  'God dag, Tannlegen, hva kan jeg hjelpe deg med?',
  // Swedish
  'Hallå?',
  'Hej, det är Anna.',
  'Ja, hallå?',
  'Erik här.',
  'Hej, vem är det?',
  'God dag, Tandläkarna, vad kan jag hjälpa till med?',
  // Danish
  'Hallo?',
  'Ja, det er Mette.',
  'Hej, det er Søren.',
  'Hvem taler jeg med?',
  'Goddag, det er Jens.',
  // German
  'Hallo?',
  'Ja, bitte?',
  'Schmidt.',
  'Hallo, hier ist Anna.',
  'Guten Tag, Praxis Weber, was kann ich für Sie tun?',
  'Ja, Müller am Apparat.',
  // Silent: they wait to hear who calls.
  null,
  null,
  null,
  null,
  null,
  null,
  null,
];

const BENCH_PREFIX = '+9990';

/** The bench answer a number plays, or null for every number of the operations contract's table. */
export function benchAnswer(number: string): { machine: BenchMachine } | { person: string | null } | null {
  if (!number.startsWith(BENCH_PREFIX)) return null;
  const kind = number.slice(BENCH_PREFIX.length, BENCH_PREFIX.length + 1);
  const at = Number(number.slice(BENCH_PREFIX.length + 1));
  if (kind === '1' && BENCH_MACHINES[at]) return { machine: BENCH_MACHINES[at] };
  if (kind === '2' && at < BENCH_PEOPLE.length) return { person: BENCH_PEOPLE[at] };
  return null;
}

/** The number of bench answer `at` of `kind`. */
export function benchNumber(kind: 'machine' | 'person', at: number): string {
  return `${BENCH_PREFIX}${kind === 'machine' ? 1 : 2}${String(at).padStart(3, '0')}`;
}
