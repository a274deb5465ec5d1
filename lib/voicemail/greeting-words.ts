// Answering-machine detection from words: the first thing the callee said after answering, as the
// transcription gave it, judged a voicemail greeting, a phone menu (IVR) or a person. Pure and
// synchronous; how long the callee spoke is the caller's to weigh (a long monologue with none of
// these phrases is still 'human' here).
//
// Precision comes first: taking a person for a machine hangs up on them or talks to them as to a
// recorder. So the phrases come in two kinds:
// - VOICEMAIL_PHRASES: what a greeting says and a person answering hardly ever does ("leave a
//   message", "after the tone", "voicemail", "you have reached"); one is enough.
// - VOICEMAIL_HINTS: what a greeting says but a person may too ("not available", "call you back");
//   a hint counts only with a second hint, a phrase, or a greeting cue ("right now", "at the
//   moment", "thanks for calling"). "I'm not available on Friday" is a person; "I'm not available
//   right now" is a greeting.
// A live cue ("how can I help you?", "Kari speaking") outweighs one phrase: a receptionist's
// "You've reached Acme, how can I help?" is a person. Two phrases outweigh it.
// All languages' lists are tried on every text: the callee's language is not known in advance.

export type FirstWordsVerdict = 'machine' | 'menu' | 'human';
export type GreetingLanguage = 'en' | 'no' | 'sv' | 'da' | 'de';

// The patterns are written against normalise()'s output: lower case ASCII words split by single
// spaces (æ → ae, ø → o, ß → ss, other diacritics dropped, "you've" → "you ve").

/** Phrases of a voicemail greeting: one is enough. */
export const VOICEMAIL_PHRASES: Record<GreetingLanguage, RegExp[]> = {
  en: [
    /\byou ?(ve|have) reached\b/,
    /\bleave (me |us )?(a |your )?(brief |short |quick |detailed )?(message|voicemail|msg)\b/,
    /\bleave your (name|number|details)\b/,
    /\b(after|at) the (tone|beep|signal)\b/,
    /\bwhen you hear the (tone|beep)\b/,
    /\bvoice ?mail\b/,
    /\bmail ?box\b/,
    /\banswering (machine|service)\b/,
    /\brecord your message\b/,
    /\b(can t|cannot|can not|unable to|not able to) (take|answer|get to|come to) (your call|the phone|the call|calls)\b/,
    /\bthe (person|subscriber|number) you (are|re) (calling|trying to reach)\b/,
  ],
  no: [
    /\bdu har (kommet|ringt) til\b/,
    /\b(legg (igjen|inn)|snakk inn|les inn) (en )?(beskjed|melding)\b/,
    /\better (pipetonen|pipet|pipelyden|tonen|signalet|lydsignalet)\b/,
    /\btelefonsvarer(en)?\b/,
    /\bmobilsvar(er|et)?\b/,
    /\btalepost(kasse|en)?\b/,
    /\b(kan|kunne) ikke (ta|svare pa) (telefonen|anropet|samtalen)\b/,
  ],
  sv: [
    /\bdu har (kommit|ringt) till\b/,
    /\blamna (ett |en )?(meddelande|medelande|besked)\b/,
    /\befter (tonen|pipet|pipsignalen|signalen)\b/,
    /\brostbrevlada(n)?\b/,
    /\btelefonsvarare(n)?\b/,
    /\bkan inte (ta|svara i) (telefonen|samtalet)\b/,
  ],
  da: [
    /\bdu har ringet til\b/,
    /\bl(ae|a|e)g (en )?(besked|meddelelse)\b/,
    /\b(efterlad|indtal) (en )?(besked|meddelelse)\b/,
    /\befter (bippet|biptonen|tonen|signalet)\b/,
    /\btelefonsvarer(en)?\b/,
    /\bkan ikke (tage|besvare) (telefonen|opkaldet)\b/,
  ],
  de: [
    /\b(sie haben|du hast) (\w+ ){0,6}erreicht\b/,
    /\bhinterlass\w* (\w+ ){0,3}nachricht\b/,
    /\bnachricht hinterlassen\b/,
    /\bnach dem (signalton|piepton|pieps|piep|ton|signal)\b/,
    /\bmailbox\b/,
    /\banrufbeantworter\b/,
    /\bsprach(box|nachricht)\b/,
  ],
};

/** Phrases a greeting says but a person may too: they count only with corroboration. */
export const VOICEMAIL_HINTS: Record<GreetingLanguage, RegExp[]> = {
  en: [
    /\b(not available|unavailable|away from (the|my) (phone|desk))\b/,
    /\b(get back to you|call you back|return your call)\b/,
  ],
  no: [/\bikke tilgjengelig\b/, /\bringer (deg )?tilbake\b/],
  sv: [/\binte tillganglig\b/, /\bring(er|a) (dig )?tillbaka\b/],
  da: [/\bikke tilg(ae|e)ngelig\b/, /\bringer (dig )?tilbage\b/],
  de: [/\bnicht (erreichbar|verfugbar|zu sprechen)\b/, /\bruf\w* (sie |dich |ihnen )?(\w+ )?zuruck\b/],
};

/** Greeting context that corroborates a hint: "not available" *right now*. */
export const GREETING_CUES: Record<GreetingLanguage, RegExp[]> = {
  en: [
    /\b(right now|at the moment|at this time|currently|thank(s| you) for calling|as soon as (possible|i can))\b/,
  ],
  no: [/\b(akkurat na|for oyeblikket|i oyeblikket|for tiden|takk for at du ringte|sa snart)\b/],
  sv: [/\b(just nu|for tillfallet|for narvarande|tack for att du ringer|tack for att du ringt|sa snart)\b/],
  da: [/\b(lige nu|i ojeblikket|for ojeblikket|tak fordi du ringer|tak for dit opkald|hurtigst muligt)\b/],
  de: [/\b(im moment|momentan|zur zeit|zurzeit|derzeit|leider|vielen dank fur ihren anruf|so bald wie)\b/],
};

/** What a person on the line says: it outweighs a single greeting phrase. */
export const LIVE_CUES: Record<GreetingLanguage, RegExp[]> = {
  // "Kari speaking", "yes, speaking"; not "you're speaking to the voicemail of".
  en: [/\b(how (can|may) i help|what can i do for you)\b/, /\b(?!(you|re|are|be|is|not|am)\b)\w+ speaking\b/],
  no: [/\b(hva|hvordan) kan jeg hjelpe\b/, /\bkan jeg hjelpe\b/],
  sv: [/\b(vad|hur) kan jag hjalpa\b/, /\bkan jag hjalpa\b/],
  da: [/\b(hvad|hvordan) kan jeg hj(ae|e)lpe\b/, /\bkan jeg hj(ae|e)lpe\b/],
  de: [
    /\bwas kann ich (fur sie|fur dich|ihnen) tun\b/,
    /\bwie kann ich (ihnen|dir) helfen\b/,
    /(?<!nicht )\bam apparat\b/,
  ],
};

const KEY_WORDS =
  '\\d|zero|one|two|three|four|five|six|seven|eight|nine|star|pound|hash|null|en|ett|et|eins|zwei|to|tva|tre|drei' +
  '|fire|fyra|vier|fem|funf|fuenf|seks|sex|sechs|sju|syv|sieben|atte|atta|otte|acht|ni|nio|neun' +
  '|stjerne|stjarna|stern|firkant|fyrkant|raute';

/** "press 1" in each language, global: a menu is a list of them. */
export const MENU_PHRASES: Record<GreetingLanguage, RegExp> = {
  en: new RegExp(`\\b(press|dial|push) (the )?(${KEY_WORDS})\\b`, 'g'),
  no: new RegExp(`\\b(trykk|tast) (pa )?(${KEY_WORDS})\\b`, 'g'),
  sv: new RegExp(`\\btryck (pa )?(${KEY_WORDS})\\b`, 'g'),
  da: new RegExp(`\\b(tryk|tast) (pa )?(${KEY_WORDS})\\b`, 'g'),
  de: new RegExp(`\\b((dru(e)?cken|wa(e)?hlen) sie (bitte )?(die )?(taste )?|taste )(${KEY_WORDS})\\b`, 'g'),
};

const LANGUAGES = Object.keys(VOICEMAIL_PHRASES) as GreetingLanguage[];

/**
 * Lower case, diacritics and punctuation gone, words split by single spaces: Whisper writes
 * "Röstbrevlåda", "rostbrevlada" and "you've" / "you have" as it pleases.
 */
export function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/æ/g, 'ae')
    .replace(/[øœ]/g, 'o')
    .replace(/ß/g, 'ss')
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

function countMatches(text: string, lists: Record<GreetingLanguage, RegExp[]>): number {
  // A pattern in two languages' lists (telefonsvarer, mailbox) counts once.
  const seen = new Set<string>();
  for (const language of LANGUAGES) {
    for (const pattern of lists[language]) {
      const match = pattern.exec(text);
      if (match) seen.add(match[0]);
    }
  }
  return seen.size;
}

function countMenuOptions(text: string): number {
  let options = 0;
  for (const language of LANGUAGES) options += text.match(MENU_PHRASES[language])?.length ?? 0;
  return options;
}

/** Whether the words are a voicemail greeting, by the rules at the top of this file. */
function soundsLikeGreeting(text: string): boolean {
  const phrases = countMatches(text, VOICEMAIL_PHRASES);
  const hints = countMatches(text, VOICEMAIL_HINTS);
  if (phrases + hints === 0) return false;
  const cue = countMatches(text, GREETING_CUES) > 0 ? 1 : 0;
  const live = countMatches(text, LIVE_CUES) > 0 ? 2 : 0;
  return 2 * phrases + hints + cue - live >= 2;
}

/**
 * Voicemail greeting, phone menu or person, from the first words the callee said. Two or more
 * "press N" make a menu even when one of them leads to a mailbox; one "press N" in a greeting
 * ("... or press 1 to page me") leaves it a greeting.
 */
export function judgeFirstWords(text: string): FirstWordsVerdict {
  const words = normalise(text);
  if (words === '') return 'human';
  const menuOptions = countMenuOptions(words);
  if (menuOptions >= 2) return 'menu';
  if (soundsLikeGreeting(words)) return 'machine';
  return menuOptions > 0 ? 'menu' : 'human';
}
