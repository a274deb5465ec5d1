import { getExampleNumber, isSupportedCountry } from 'libphonenumber-js/max';
import mobileExamples from 'libphonenumber-js/mobile/examples';

// How many digits the numbers a caller reads out have where the agent's language is spoken (its
// region, else its language's country): a number read out in groups is not over before it has them
// (lib/voice-runtime/unfinished-words.ts), and one that has them ends the turn at its pause.

/** A whole phone number's digits, read out at home and after a plus. */
export interface PhoneNumberDigits {
  national: number;
  international: number;
}

/**
 * How many digits a whole phone number has where `language` is spoken: as libphonenumber's example
 * mobile number of the country has them, read out at home in its national format (with the trunk
 * 0 where one is said: "070-123 45 67" in Sweden, 10; "40 61 23 45" in Norway, 8; "(201) 555-0123"
 * in the US, 10) and after a plus (the country code, without the 0: "+46 70 123 45 67", 11). Of a
 * Swedish mobile number, "070 123 45" are 8 of its 10 digits; of a Norwegian one with its country
 * code, "+47 91 23 45" 8 of 10. Where a country's numbers differ in length (Germany's mobile
 * numbers have 11 or 12 digits, its example 12), a shorter one waits for more: patience, not a cut.
 * A language of no known country: 8, the shortest of these (10 after a plus).
 */
const ANY_PHONE_NUMBER_DIGITS: PhoneNumberDigits = { national: 8, international: 10 };

/**
 * Numbers of one length in a country, by the words that ask for them: a postcode, a national
 * identity number, a company's registration number. Asked for one ("What is your ZIP code?", "Hva
 * er fødselsnummeret ditt?"), that many digits are the whole of it; a phone number's length is
 * phoneNumberDigits's. Where a kind has no single length (Britain's postcodes have letters) it
 * is not listed, and the number's end is not known.
 */
const KNOWN_LENGTHS: { words: RegExp; digits: Record<string, number> }[] = [
  {
    words: /(?<!\p{L})(?:zip|post ?code|postal code|postnummer|postnr|postleitzahl|plz)/iu,
    digits: { US: 5, NO: 4, DK: 4, SE: 5, DE: 5, CH: 4, AU: 4 },
  },
  {
    words: /(?<!\p{L})(?:social security|ssn|fødselsnummer|personnummer|personnr|cpr|steuer-?id)/iu,
    digits: { US: 9, NO: 11, SE: 10, DK: 10, DE: 11 },
  },
  {
    words: /(?<!\p{L})(?:organisasjonsnummer|organisationsnummer|org\.? ?nr|cvr)/iu,
    digits: { NO: 9, SE: 10, DK: 8 },
  },
];

/** A language's country, when a tag names none ("sv", "de"). */
const LANGUAGE_COUNTRY: Record<string, string> = {
  nb: 'NO',
  nn: 'NO',
  no: 'NO',
  da: 'DK',
  sv: 'SE',
  de: 'DE',
};

/** The country of `language` (BCP 47): its region subtag, else its language's; undefined: none known. */
function countryOfLanguage(language: string): string | undefined {
  const [primary, ...rest] = language.split('-');
  const region = rest.find((subtag) => /^[A-Za-z]{2}$/.test(subtag))?.toUpperCase();
  return region ?? LANGUAGE_COUNTRY[primary.toLowerCase()];
}

/** Each country's, once worked out (a pause's words are read many times a call). */
const phoneNumbers = new Map<string, PhoneNumberDigits>();

/** A whole phone number's digits for `language`, read out at home or after a plus. */
export function phoneNumberDigits(language: string): PhoneNumberDigits {
  const country = countryOfLanguage(language);
  if (!country || !isSupportedCountry(country)) return ANY_PHONE_NUMBER_DIGITS;
  let digits = phoneNumbers.get(country);
  if (!digits) {
    const example = getExampleNumber(country, mobileExamples);
    digits = example
      ? {
          national: example.formatNational().replace(/\D/g, '').length,
          international: example.number.length - 1, // E.164: "+" and the digits
        }
      : ANY_PHONE_NUMBER_DIGITS;
    phoneNumbers.set(country, digits);
  }
  return digits;
}

/** The digits of the number `sentence` asks for, when it is of a kind with one length in `language`'s country. */
export function knownLength(sentence: string, language: string): number | undefined {
  const country = countryOfLanguage(language);
  if (!country) return undefined;
  return KNOWN_LENGTHS.find((kind) => kind.words.test(sentence) && kind.digits[country])?.digits[country];
}
