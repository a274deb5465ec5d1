import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  checkDestination,
  countryOf,
  DEFAULT_DIALING_COUNTRIES,
  describeRefusal,
  parseDialingCountries,
} from '../lib/calls/destination-policy.js';
import { loadSettings } from '../lib/settings.js';

// Where calls may go (toll fraud): the one check of every number the service dials, with
// libphonenumber's full metadata for the number's type and country.

const nordicAndNorthAmerica = { dialingCountries: DEFAULT_DIALING_COUNTRIES };

describe('checkDestination', () => {
  test('ordinary numbers of the dialing countries pass: mobile, fixed, toll-free', () => {
    for (const number of ['+4791234567', '+4722000100', '+46701234567', '+4531234567', '+358401234567']) {
      assert.equal(checkDestination(number, nordicAndNorthAmerica), null, number);
    }
    for (const number of ['+12025550143', '+16135550123', '+18005551234']) {
      assert.equal(checkDestination(number, nordicAndNorthAmerica), null, number);
    }
  });

  test('in order: E.164, emergency, high-cost, country, the call’s own numbers', () => {
    assert.deepEqual(checkDestination('004791234567', nordicAndNorthAmerica), {
      code: 'parameter_invalid',
      reason: 'not_e164',
    });
    assert.deepEqual(checkDestination('+4711200000', { dialingCountries: ['SE'] }), {
      code: 'emergency_number',
      reason: 'emergency',
    });
    // High-cost beats the country: a premium number of a country not dialled says why it is refused.
    assert.deepEqual(checkDestination('+46900123456', { dialingCountries: ['NO'] }), {
      code: 'destination_not_allowed',
      reason: 'high_cost',
      type: 'PREMIUM_RATE',
    });
    assert.deepEqual(
      checkDestination('+4791234567', { dialingCountries: ['SE'], ownNumbers: ['+4791234567'] }),
      { code: 'destination_not_allowed', reason: 'country', country: 'NO' },
    );
    assert.deepEqual(
      checkDestination('+4791234567', { dialingCountries: ['NO'], ownNumbers: [null, '+4791234567'] }),
      { code: 'destination_not_allowed', reason: 'own_number' },
    );
  });

  test('high-cost types from the metadata, and the international ranges, even with every country allowed', () => {
    const everywhere = { dialingCountries: '*' as const };
    const cases: [string, string][] = [
      ['+4782012345', 'PREMIUM_RATE'], // Norway 820
      ['+19005551234', 'PREMIUM_RATE'], // NANP 900
      ['+4590123456', 'PREMIUM_RATE'], // Denmark 90
      ['+35860012345', 'PREMIUM_RATE'], // Finland 600
      ['+447012345678', 'PERSONAL_NUMBER'], // UK 070
      ['+4781012345', 'UAN'], // Norway 810
      ['+881612345678', '+881'],
      ['+882123456789', '+882'],
      ['+883123456789', '+883'],
      ['+97912345678', '+979'],
    ];
    for (const [number, type] of cases) {
      assert.deepEqual(
        checkDestination(number, everywhere),
        { code: 'destination_not_allowed', reason: 'high_cost', type },
        number,
      );
    }
    assert.equal(checkDestination('+61491570006', everywhere), null, 'an Australian mobile, with *');
  });

  test('shared-cost and pager numbers are refused even in a dialing country', () => {
    // libphonenumber's own example numbers of these types (its metadata's exampleNumber).
    const cases: [string, string][] = [
      ['+46771234567', 'SHARED_COST'], // Sweden 077
      ['+4781021234', 'SHARED_COST'], // Norway 810 0x/2x-8x
      ['+46740123456', 'PAGER'], // Sweden 074
    ];
    for (const [number, type] of cases) {
      assert.deepEqual(
        checkDestination(number, nordicAndNorthAmerica),
        { code: 'destination_not_allowed', reason: 'high_cost', type },
        number,
      );
    }
  });

  test('the country: the number’s region, else the main country of its calling code', () => {
    assert.equal(countryOf('+447700900123'), 'GB');
    assert.equal(countryOf('+12425551234'), 'BS', 'NANP: the Bahamas by area code, not the US');
    assert.equal(countryOf('+15555550100'), 'US', 'no valid area code: the main country of +1');
    assert.equal(countryOf('+479012345678'), 'NO', 'too long to be valid: still Norway');
    assert.equal(countryOf('+99912345'), null, 'a calling code no country has');
    assert.deepEqual(checkDestination('+12425551234', nordicAndNorthAmerica), {
      code: 'destination_not_allowed',
      reason: 'country',
      country: 'BS',
    });
  });

  test('each refusal reads as a sentence naming the number', () => {
    const premium = checkDestination('+4782012345', nordicAndNorthAmerica)!;
    assert.match(
      describeRefusal('+4782012345', premium),
      /\+4782012345 is a high-cost number \(premium rate\)/,
    );
    const country = checkDestination('+447700900123', nordicAndNorthAmerica)!;
    assert.match(describeRefusal('+447700900123', country), /in GB, which this workspace may not dial/);
  });
});

describe('dialing countries', () => {
  test('parsed from codes, any case and spacing, duplicates once; * is every country', () => {
    assert.deepEqual(parseDialingCountries(' no, SE ,se', 'X'), ['NO', 'SE']);
    assert.equal(parseDialingCountries('*', 'X'), '*');
    assert.throws(() => parseDialingCountries('NO,XX', 'DIALING_COUNTRIES'), /DIALING_COUNTRIES: XX is not/);
    assert.throws(() => parseDialingCountries('NOR', 'X'), /NOR is not/);
    assert.throws(() => parseDialingCountries(' , ', 'X'), /must be \* or country codes/);
  });

  test('DIALING_COUNTRIES: the deployment’s default, NO,SE,DK,FI,US,CA when unset; a bad value stops the start', () => {
    assert.deepEqual(loadSettings({}).dialingCountries, ['NO', 'SE', 'DK', 'FI', 'US', 'CA']);
    assert.deepEqual(loadSettings({ DIALING_COUNTRIES: 'gb,ie' }).dialingCountries, ['GB', 'IE']);
    assert.equal(loadSettings({ DIALING_COUNTRIES: '*' }).dialingCountries, '*');
    assert.throws(() => loadSettings({ DIALING_COUNTRIES: 'Norway' }), /DIALING_COUNTRIES/);
  });

  test('TRANSFER_NUMBER is never a high-cost or emergency number: the start is refused, naming it', () => {
    assert.equal(loadSettings({ TRANSFER_NUMBER: '+4722000100' }).transferNumber, '+4722000100');
    assert.throws(
      () => loadSettings({ TRANSFER_NUMBER: '+4782012345' }),
      /^Error: TRANSFER_NUMBER: .*high-cost/,
    );
    assert.throws(() => loadSettings({ TRANSFER_NUMBER: '+4711200000' }), /TRANSFER_NUMBER: Emergency/);
  });
});
