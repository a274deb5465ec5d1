import { type LinesByLanguage, lineInLanguage } from './line-in-language.js';

// The scripted agent's everyday lines in the languages the local speech serves (English, Norwegian,
// Swedish, Danish, German; docs/voice.md "Languages"), so an agent in one of them holds a
// conversation in it without a language model; the rest of its lines are English.

/** `{name}` is the agent's name. */
const INTRODUCTION: LinesByLanguage = {
  en: 'Hello, this is {name}. How can I help you today?',
  nb: 'Hei, dette er {name}. Hva kan jeg hjelpe deg med i dag?',
  no: 'Hei, dette er {name}. Hva kan jeg hjelpe deg med i dag?',
  sv: 'Hej, det här är {name}. Vad kan jag hjälpa dig med i dag?',
  da: 'Hej, det er {name}. Hvad kan jeg hjælpe dig med i dag?',
  de: 'Hallo, hier ist {name}. Wie kann ich Ihnen heute helfen?',
};

const CONFIRM: LinesByLanguage = {
  en: 'Great. Shall I go ahead and confirm that for you?',
  nb: 'Flott. Skal jeg bekrefte det for deg?',
  no: 'Flott. Skal jeg bekrefte det for deg?',
  sv: 'Toppen. Ska jag bekräfta det åt dig?',
  da: 'Fint. Skal jeg bekræfte det for dig?',
  de: 'Sehr gut. Soll ich das für Sie bestätigen?',
};

const WELCOME: LinesByLanguage = {
  en: "You're welcome! Is there anything else I can help you with?",
  nb: 'Bare hyggelig! Er det noe annet jeg kan hjelpe deg med?',
  no: 'Bare hyggelig! Er det noe annet jeg kan hjelpe deg med?',
  sv: 'Varsågod! Finns det något annat jag kan hjälpa dig med?',
  da: 'Selv tak! Er der andet, jeg kan hjælpe dig med?',
  de: 'Gern geschehen! Kann ich Ihnen sonst noch helfen?',
};

const GOODBYE: LinesByLanguage = {
  en: 'Thank you for your time. Goodbye!',
  nb: 'Takk for samtalen. Ha det bra!',
  no: 'Takk for samtalen. Ha det bra!',
  sv: 'Tack för samtalet. Hej då!',
  da: 'Tak for samtalen. Farvel!',
  de: 'Vielen Dank für Ihre Zeit. Auf Wiedersehen!',
};

/** Any of `alternatives` as whole words (letters beyond ASCII count as letters: "hej då!"). */
function words(alternatives: string): RegExp {
  return new RegExp(`(?<!\\p{L})(?:${alternatives})(?!\\p{L})`, 'iu');
}

/** A goodbye or thanks in any of them (a caller may mix languages; transcriptions drop accents). */
export const SAYS_GOODBYE = words(
  'bye|goodbye|ha det|hade|farvel|hej d[aå]|adj[oö]|tsch[uü]ss|auf wiedersehen',
);
export const THANKS = words('thank|thanks|perfect|great|takk|tack|tak|danke|perfekt|flott|toppen');

export const introductionIn = (language: string | null, name: string) =>
  lineInLanguage(INTRODUCTION, language).replace('{name}', name);
export const confirmIn = (language: string | null) => lineInLanguage(CONFIRM, language);
export const welcomeIn = (language: string | null) => lineInLanguage(WELCOME, language);
export const goodbyeIn = (language: string | null) => lineInLanguage(GOODBYE, language);
