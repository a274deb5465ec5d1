// The service's own lines (an apology, a failed transfer) come in a few languages: the agent's
// language picks one by its primary subtag, and English stands in for the rest.

/** Texts by primary language subtag (`en`, `nb`, …); `en` is required. */
export type LinesByLanguage = Record<string, string> & { en: string };

/** The line for `language` (a BCP 47 tag; its primary subtag picks the text), English otherwise. */
export function lineInLanguage(lines: LinesByLanguage, language: string | null): string {
  const primary = language?.split('-')[0]?.toLowerCase() ?? 'en';
  return lines[primary] ?? lines.en;
}
