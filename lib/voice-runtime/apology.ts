import { type LinesByLanguage, lineInLanguage } from './line-in-language.js';

// What the agent says before it hangs up on a call it cannot go on with (its runtime failed past
// the turn's retry budget, `end_reason` `agent_error`): one short sentence in the agent's
// language where we have one, else in English.

const APOLOGIES: LinesByLanguage = {
  en: "I'm sorry, I'm having technical difficulties and have to end the call now. Please try again later. Goodbye.",
  nb: 'Beklager, jeg har tekniske problemer og må avslutte samtalen nå. Prøv gjerne igjen senere. Ha det.',
  no: 'Beklager, jeg har tekniske problemer og må avslutte samtalen nå. Prøv gjerne igjen senere. Ha det.',
  nn: 'Beklagar, eg har tekniske problem og må avslutte samtalen no. Prøv gjerne igjen seinare. Ha det.',
  sv: 'Förlåt, jag har tekniska problem och måste avsluta samtalet nu. Försök gärna igen senare. Hej då.',
  da: 'Beklager, jeg har tekniske problemer og må afslutte opkaldet nu. Prøv venligst igen senere. Farvel.',
  de: 'Entschuldigung, ich habe technische Probleme und muss das Gespräch jetzt beenden. Bitte versuchen Sie es später noch einmal. Auf Wiederhören.',
  fr: "Je suis désolé, je rencontre un problème technique et je dois mettre fin à l'appel. Merci de réessayer plus tard. Au revoir.",
  es: 'Lo siento, tengo problemas técnicos y tengo que terminar la llamada. Por favor, inténtelo más tarde. Adiós.',
};

/** The apology in `language` (a BCP 47 tag; its primary subtag picks the text), English otherwise. */
export function apologyLine(language: string | null): string {
  return lineInLanguage(APOLOGIES, language);
}
