import { getCountryCallingCode, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import metadata from 'libphonenumber-js/metadata.max.json';
import { isE164 } from '../e164.js';
import { isEmergencyNumber } from './emergency-numbers.js';

// Where calls may go (toll fraud): the one check every number the service dials passes, an
// outbound call's `to`, a transfer target when it is set and again when it is used, whatever the
// SIP side dials. In this order, the first refusal wins:
//   1. E.164                                                  parameter_invalid
//   2. not an emergency number                                emergency_number
//   3. not a high-cost number (its type in libphonenumber's
//      full metadata, and the international ranges below)    destination_not_allowed
//   4. its country is one the workspace may dial               destination_not_allowed
//   5. not one of the call's own numbers                       destination_not_allowed
// The types refused are those a caller pays for beyond an ordinary call, or that forward to where
// the owner chooses: premium rate, shared cost, personal numbers (UK 070), universal access numbers
// and pagers. Mobile, fixed, VoIP and toll-free numbers pass.

const HIGH_COST_TYPES = new Set(['PREMIUM_RATE', 'SHARED_COST', 'PERSONAL_NUMBER', 'UAN', 'PAGER']);
/** Satellite (+881), international networks (+882, +883) and international premium rate (+979). */
const HIGH_COST_CALLING_CODES = ['881', '882', '883', '979'];

/** ISO 3166 alpha-2 codes, or every country ('*'; high-cost numbers are still refused). */
export type DialingCountries = readonly string[] | '*';

/** The deployment's default (DIALING_COUNTRIES): the Nordic countries and North America. */
export const DEFAULT_DIALING_COUNTRIES: readonly string[] = ['NO', 'SE', 'DK', 'FI', 'US', 'CA'];

export type DestinationRefusal =
  | { code: 'parameter_invalid'; reason: 'not_e164' }
  | { code: 'emergency_number'; reason: 'emergency' }
  | { code: 'destination_not_allowed'; reason: 'high_cost'; type: string }
  | { code: 'destination_not_allowed'; reason: 'country'; country: string | null }
  | { code: 'destination_not_allowed'; reason: 'own_number' };

export interface DestinationRules {
  dialingCountries: DialingCountries;
  /** The call's own numbers (its caller id, and for a transfer the caller's number). */
  ownNumbers?: readonly (string | null | undefined)[];
}

/** Null when `number` may be dialled under `rules`; else why not. */
export function checkDestination(number: unknown, rules: DestinationRules): DestinationRefusal | null {
  if (!isE164(number)) return { code: 'parameter_invalid', reason: 'not_e164' };
  if (isEmergencyNumber(number)) return { code: 'emergency_number', reason: 'emergency' };
  const digits = number.slice(1);
  const international = HIGH_COST_CALLING_CODES.find((code) => digits.startsWith(code));
  if (international)
    return { code: 'destination_not_allowed', reason: 'high_cost', type: `+${international}` };
  const parsed = parsePhoneNumberFromString(number);
  const type = parsed?.getType();
  if (type && HIGH_COST_TYPES.has(type))
    return { code: 'destination_not_allowed', reason: 'high_cost', type };
  if (rules.dialingCountries !== '*') {
    const country = countryOfParsed(number, parsed);
    if (!country || !rules.dialingCountries.includes(country)) {
      return { code: 'destination_not_allowed', reason: 'country', country };
    }
  }
  if (rules.ownNumbers?.includes(number)) return { code: 'destination_not_allowed', reason: 'own_number' };
  return null;
}

/** The number's region, else the main country of its calling code (null for non-geographic codes). */
export function countryOf(e164: string): string | null {
  return countryOfParsed(e164, parsePhoneNumberFromString(e164));
}

function countryOfParsed(e164: string, parsed: ReturnType<typeof parsePhoneNumberFromString>): string | null {
  if (parsed?.country) return parsed.country;
  const callingCode = parsed?.countryCallingCode ?? callingCodeOf(e164);
  const main = callingCode
    ? (metadata.country_calling_codes as Record<string, string[]>)[callingCode]?.[0]
    : undefined;
  return main && main !== '001' ? main : null;
}

/** The longest calling code (1 to 3 digits) that starts the number. */
function callingCodeOf(e164: string): string | undefined {
  const codes = metadata.country_calling_codes as Record<string, string[]>;
  for (const length of [1, 2, 3]) {
    const code = e164.slice(1, 1 + length);
    if (codes[code]) return code;
  }
  return undefined;
}

/** A sentence for the refusal, for the API's message and the operator's log. */
export function describeRefusal(number: string, refusal: DestinationRefusal): string {
  switch (refusal.reason) {
    case 'not_e164':
      return 'Phone numbers must be in E.164 format, e.g. +4791234567.';
    case 'emergency':
      return 'Emergency numbers can never be called.';
    case 'high_cost':
      return `${number} is a high-cost number (${refusal.type.toLowerCase().replace(/_/g, ' ')}); it is never dialled.`;
    case 'country':
      return refusal.country
        ? `${number} is in ${refusal.country}, which this workspace may not dial (its dialing countries).`
        : `${number} is not in a country this workspace may dial.`;
    case 'own_number':
      return `${number} is one of the call's own numbers.`;
  }
}

/** Parses DIALING_COUNTRIES or `--dialing-countries`: `*`, or ISO 3166 alpha-2 codes separated by commas. */
export function parseDialingCountries(text: string, name: string): DialingCountries {
  const trimmed = text.trim();
  if (trimmed === '*') return '*';
  const codes = trimmed
    .split(',')
    .map((code) => code.trim().toUpperCase())
    .filter(Boolean);
  if (codes.length === 0) throw new Error(`${name} must be * or country codes such as NO,SE`);
  for (const code of codes) {
    if (!/^[A-Z]{2}$/.test(code) || !isCountryCode(code)) {
      throw new Error(`${name}: ${code} is not an ISO 3166 alpha-2 country code libphonenumber knows`);
    }
  }
  return [...new Set(codes)];
}

function isCountryCode(code: string): boolean {
  try {
    getCountryCallingCode(code as Parameters<typeof getCountryCallingCode>[0]);
    return true;
  } catch {
    return false;
  }
}
