import type { TranscriptLine } from '../calls/transcript.js';
import { type LinesByLanguage, lineInLanguage } from './line-in-language.js';

// What the agent says around a warm transfer (telephony spec section 8), in its language where we
// have one, else in English: to the caller while the person is rung (when the destination has no
// `message` of its own), and when the person could not be reached and the conversation goes on.

const HOLD: LinesByLanguage = {
  en: "One moment, please. I'm calling a colleague and will connect you.",
  nb: 'Et øyeblikk. Jeg ringer en kollega og setter deg over.',
  no: 'Et øyeblikk. Jeg ringer en kollega og setter deg over.',
  nn: 'Eit augeblikk. Eg ringjer ein kollega og set deg over.',
  sv: 'Ett ögonblick. Jag ringer en kollega och kopplar dig vidare.',
  da: 'Et øjeblik. Jeg ringer til en kollega og stiller dig videre.',
  de: 'Einen Moment bitte. Ich rufe einen Kollegen an und verbinde Sie.',
};

const NOT_REACHED: LinesByLanguage = {
  en: "I'm sorry, my colleague isn't available right now. Is there anything else I can help you with?",
  nb: 'Beklager, kollegaen min er ikke tilgjengelig akkurat nå. Er det noe annet jeg kan hjelpe deg med?',
  no: 'Beklager, kollegaen min er ikke tilgjengelig akkurat nå. Er det noe annet jeg kan hjelpe deg med?',
  nn: 'Beklagar, kollegaen min er ikkje tilgjengeleg akkurat no. Er det noko anna eg kan hjelpe deg med?',
  sv: 'Förlåt, min kollega är inte tillgänglig just nu. Finns det något annat jag kan hjälpa dig med?',
  da: 'Beklager, min kollega er ikke tilgængelig lige nu. Er der andet, jeg kan hjælpe dig med?',
  de: 'Entschuldigung, mein Kollege ist gerade nicht erreichbar. Kann ich Ihnen sonst noch helfen?',
};

export function holdLine(language: string | null): string {
  return lineInLanguage(HOLD, language);
}

export function notReachedLine(language: string | null): string {
  return lineInLanguage(NOT_REACHED, language);
}

/**
 * A briefing made without a language model: who is calling and why, from the caller's last words
 * of substance (the scripted agent; and any runtime's fallback when its own briefing fails).
 */
export function briefingFromTranscript(
  agentName: string,
  caller: string | null,
  transcript: TranscriptLine[],
): string {
  const said = transcript
    .filter((line) => line.role === 'caller' && line.text.split(/\s+/).length >= 4)
    .map((line) => line.text.trim())
    .at(-1);
  const who = caller ? `a caller from ${caller}` : 'a caller';
  return said
    ? `Hi, this is ${agentName}, the assistant. I have ${who} on the line who said: "${said}" I'm putting them through now.`
    : `Hi, this is ${agentName}, the assistant. I have ${who} on the line for you; I'm putting them through now.`;
}
