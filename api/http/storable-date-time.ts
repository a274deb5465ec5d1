import { fullFormats } from 'ajv-formats/dist/formats.js';

// RFC 3339 (the document's `format: date-time`) allows instants the service cannot keep: a leap
// second (`23:59:60`, which JavaScript's Date cannot represent) and years before 0001 (the year
// 0000, or 0001 moved back into it by an offset). Either reached PostgreSQL as a 500. The API
// takes a date-time from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z without a leap second,
// and refuses anything else as 400 parameter_invalid (docs/api-platform.md, "Date-times").

const rfc3339 = (fullFormats['date-time'] as { validate: (value: string) => boolean }).validate;
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');
const LEAP_SECOND = /[Tt ]\d\d:\d\d:60/;

export function isStorableDateTime(value: string): boolean {
  if (!rfc3339(value) || LEAP_SECOND.test(value)) return false;
  const instant = Date.parse(value);
  return Number.isFinite(instant) && instant >= EARLIEST && instant <= LATEST;
}
