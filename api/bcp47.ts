// Well-formedness of a BCP 47 language tag (RFC 5646 section 2.1 grammar), case-insensitive,
// with no repeated variant or extension singleton (2.2.5, 2.2.6). One step further than the
// grammar: the primary language subtag must be 2 or 3 letters (ISO 639). The grammar's 4-letter
// (reserved) and 5-8-letter (registered) forms have no assigned values, and accepting them would
// let `english` or `norwegian` through. Not checked against the IANA registry.
// `nb-NO`, `en`, `zh-Hant-TW`, `de-CH-1996`, `es-419`, `en-US-x-twain` pass; `english`, `nb_NO`,
// `en-`, `a-b` do not.

const alphanum = '[a-z0-9]';
const language = `(?:[a-z]{2,3}(?:-[a-z]{3}){0,3})`;
const script = `(?:-[a-z]{4})`;
const region = `(?:-(?:[a-z]{2}|[0-9]{3}))`;
const variant = `(?:-(?:${alphanum}{5,8}|[0-9]${alphanum}{3}))`;
const extension = `(?:-[0-9a-wy-z](?:-${alphanum}{2,8})+)`;
const privateUse = `(?:x(?:-${alphanum}{1,8})+)`;
const langtag = `${language}${script}?${region}?${variant}*${extension}*(?:-${privateUse})?`;
const grandfathered = [
  'en-GB-oed',
  'i-ami',
  'i-bnn',
  'i-default',
  'i-enochian',
  'i-hak',
  'i-klingon',
  'i-lux',
  'i-mingo',
  'i-navajo',
  'i-pwn',
  'i-tao',
  'i-tay',
  'i-tsu',
  'sgn-BE-FR',
  'sgn-BE-NL',
  'sgn-CH-DE',
  'art-lojban',
  'cel-gaulish',
  'no-bok',
  'no-nyn',
  'zh-guoyu',
  'zh-hakka',
  'zh-min',
  'zh-min-nan',
  'zh-xiang',
].map((tag) => tag.replaceAll('-', '\\-'));

const BCP47 = new RegExp(`^(?:${langtag}|${privateUse}|${grandfathered.join('|')})$`, 'i');

export function isWellFormedLanguageTag(tag: string): boolean {
  if (!BCP47.test(tag)) return false;
  // RFC 5646 2.2.5/2.2.6: a variant or extension singleton may not repeat.
  const subtags = tag.toLowerCase().split('-');
  const privateStart = subtags.indexOf('x');
  const beforePrivate = privateStart === -1 ? subtags : subtags.slice(0, privateStart);
  const singletons = beforePrivate.filter((s, i) => i > 0 && s.length === 1);
  if (new Set(singletons).size !== singletons.length) return false;
  const firstSingleton = beforePrivate.findIndex((s, i) => i > 0 && s.length === 1);
  const main = firstSingleton === -1 ? beforePrivate : beforePrivate.slice(0, firstSingleton);
  const variants = main.filter((s, i) => i > 0 && (s.length >= 5 || /^[0-9][a-z0-9]{3}$/.test(s)));
  return new Set(variants).size === variants.length;
}
