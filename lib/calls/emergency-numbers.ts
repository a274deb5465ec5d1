// Emergency numbers can never be called (422 emergency_number). A number is matched on its
// national part (after the country calling code) against the emergency short codes of that
// country. Where the numbering plan keeps those leading digits for service codes (NANP: N11
// codes are never area codes; Norway: numbers starting with 1 are service codes) any number
// that starts with the code is refused (+19110000000, +4711200000); elsewhere the short code
// would also begin ordinary numbers (+46 11… is Norrköping), so only the short code itself is.

interface CountryEmergencyCodes {
  country: string;
  callingCode: string;
  codes: string[];
  match: 'prefix' | 'exact';
}

export const EMERGENCY_CODES: CountryEmergencyCodes[] = [
  { country: 'US/CA (NANP)', callingCode: '1', codes: ['911', '112'], match: 'prefix' },
  { country: 'NO', callingCode: '47', codes: ['110', '112', '113'], match: 'prefix' },
  { country: 'SE', callingCode: '46', codes: ['112', '90000'], match: 'exact' },
  { country: 'DK', callingCode: '45', codes: ['112', '114'], match: 'exact' },
  { country: 'FI', callingCode: '358', codes: ['112'], match: 'exact' },
  { country: 'DE', callingCode: '49', codes: ['110', '112'], match: 'exact' },
  { country: 'GB', callingCode: '44', codes: ['999', '112'], match: 'exact' },
  { country: 'IE', callingCode: '353', codes: ['999', '112'], match: 'exact' },
  {
    country: 'FR',
    callingCode: '33',
    codes: ['15', '17', '18', '112', '114', '115', '119', '196'],
    match: 'exact',
  },
  { country: 'ES', callingCode: '34', codes: ['112', '091', '092', '061', '080'], match: 'exact' },
  { country: 'IT', callingCode: '39', codes: ['112', '113', '115', '118'], match: 'exact' },
  { country: 'NL', callingCode: '31', codes: ['112'], match: 'exact' },
  { country: 'PL', callingCode: '48', codes: ['112', '997', '998', '999'], match: 'exact' },
  { country: 'AU', callingCode: '61', codes: ['000', '112'], match: 'exact' },
  { country: 'NZ', callingCode: '64', codes: ['111'], match: 'exact' },
  { country: 'IN', callingCode: '91', codes: ['112', '100', '101', '102', '108'], match: 'exact' },
  { country: 'JP', callingCode: '81', codes: ['110', '119'], match: 'exact' },
  { country: 'BR', callingCode: '55', codes: ['190', '192', '193'], match: 'exact' },
  { country: 'MX', callingCode: '52', codes: ['911'], match: 'exact' },
  { country: 'ZA', callingCode: '27', codes: ['10111', '10177', '112'], match: 'exact' },
];

/** True when `e164` (`+` and digits) is an emergency number of its country. */
export function isEmergencyNumber(e164: string): boolean {
  const digits = e164.replace(/^\+/, '');
  return EMERGENCY_CODES.some(({ callingCode, codes, match }) => {
    if (!digits.startsWith(callingCode)) return false;
    const national = digits.slice(callingCode.length);
    return codes.some((code) => (match === 'prefix' ? national.startsWith(code) : national === code));
  });
}
