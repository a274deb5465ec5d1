import { type LinesByLanguage, lineInLanguage } from './line-in-language.js';

// What the agent says when a transfer it announced cannot be made (its target failed the check
// when used, telephony spec section 1): the call goes on with the agent, in its language where we
// have one, else in English.

const LINES: LinesByLanguage = {
  en: "I'm sorry, I couldn't put you through. Is there anything else I can help you with?",
  nb: 'Beklager, jeg fikk ikke satt deg over. Er det noe annet jeg kan hjelpe deg med?',
  no: 'Beklager, jeg fikk ikke satt deg over. Er det noe annet jeg kan hjelpe deg med?',
  nn: 'Beklagar, eg fekk ikkje sett deg over. Er det noko anna eg kan hjelpe deg med?',
  sv: 'Förlåt, jag kunde inte koppla dig vidare. Finns det något annat jag kan hjälpa dig med?',
  da: 'Beklager, jeg kunne ikke stille dig videre. Er der andet, jeg kan hjælpe dig med?',
  de: 'Entschuldigung, ich konnte Sie nicht verbinden. Kann ich Ihnen sonst noch helfen?',
  fr: "Je suis désolé, je n'ai pas pu vous transférer. Puis-je vous aider autrement ?",
  es: 'Lo siento, no he podido transferirle. ¿Puedo ayudarle en algo más?',
};

/** The line in `language` (a BCP 47 tag; its primary subtag picks the text), English otherwise. */
export function transferFailedLine(language: string | null): string {
  return lineInLanguage(LINES, language);
}
