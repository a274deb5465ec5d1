// Well-formedness of a BCP 47 language tag (RFC 5646 section 2.1 grammar), case-insensitive,
// with no repeated variant or extension singleton (2.2.5, 2.2.6). One step further than the
// grammar: the primary language subtag must be 2 or 3 letters (ISO 639). The grammar's 4-letter
// (reserved) and 5-8-letter (registered) forms have no assigned values, and accepting them would
// let `english` or `norwegian` through. Not checked against the IANA registry.
// `nb-NO`, `en`, `zh-Hant-TW`, `de-CH-1996`, `es-419`, `en-US-x-twain` pass; `english`, `nb_NO`,
// `en-`, `a-b`, `de-1996-1996` do not.
//
// The rule is one JSON Schema `pattern` (ECMA-262, no flags), so the OpenAPI document states
// exactly what the server accepts and clients and test generators can check it themselves.
// Without flags, letter case is spelled out in the character classes, and the repeated-subtag
// checks use back-references, which compare as written: `de-1996-1996` is refused,
// `de-Rozaj-rozaj` is not.

const alpha = '[A-Za-z]';
const digit = '[0-9]';
const alphanum = '[A-Za-z0-9]';
const language = `${alpha}{2,3}(?:-${alpha}{3}){0,3}`;
const script = `-${alpha}{4}`;
const region = `-(?:${alpha}{2}|${digit}{3})`;
const variantSubtag = `(?:${alphanum}{5,8}|${digit}${alphanum}{3})`;
const variant = `-${variantSubtag}`;
const singletonChar = '[0-9A-WY-Za-wy-z]';
const extension = `-${singletonChar}(?:-${alphanum}{2,8})+`;
const privateUse = `[Xx](?:-${alphanum}{1,8})+`;
const langtag = `${language}(?:${script})?(?:${region})?(?:${variant})*(?:${extension})*(?:-${privateUse})?`;

/** `i-klingon` → `[Ii]-[Kk][Ll]…`: a literal tag, matched in any letter case. */
const anyCase = (literal: string) =>
  [...literal].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join('');

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
].map(anyCase);

/** Characters up to (not into) the next singleton subtag: the part before extensions. */
const beforeSingleton = `(?:(?!-${alphanum}(?:-|$)).)*?`;
/** Characters up to (not into) the private-use part. */
const beforePrivateUse = '(?:(?!-[Xx]-).)*?';
/** A variant subtag that appears again before the first singleton (RFC 5646 2.2.5). */
const repeatedVariant = `(?![Xx]-)${beforeSingleton}-(${variantSubtag})(?=-)${beforeSingleton}-\\1(?:-|$)`;
/** An extension singleton that appears again before the private-use part (RFC 5646 2.2.6). */
const repeatedSingleton = `(?![Xx]-)${beforePrivateUse}-(${singletonChar})-${beforePrivateUse}-\\2-`;

export const BCP47_PATTERN = `^(?!${repeatedVariant})(?!${repeatedSingleton})(?:${langtag}|${privateUse}|${grandfathered.join('|')})$`;

const BCP47 = new RegExp(BCP47_PATTERN, 'u');

export function isWellFormedLanguageTag(tag: string): boolean {
  return BCP47.test(tag);
}
