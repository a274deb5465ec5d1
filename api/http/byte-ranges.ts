import parseRange from 'range-parser';
import { ApiError } from './errors.js';
import type { HeaderDescription, RouteResponse } from './route.js';

// `Range: bytes=…` on a file the API serves (RFC 9110 section 14), parsed by range-parser. One
// range is answered 206 with Content-Range. A header that is not a byte range, or that asks for
// several ranges, is ignored and the whole file is sent (200), as the RFC lets a server do; a
// header none of whose byte ranges can be served (each starts past the end, or cannot be read,
// as range-parser judges) is 416 with `Content-Range: bytes */<size>` and the spec's error body,
// type invalid_request_error (param `Range`).

export type ServedPart = { start: number; end: number; partial: boolean };

/** The bytes to send of a file of `size` bytes for this Range header; throws 416 when none can be. */
export function servedPart(rangeHeader: string | undefined, size: number): ServedPart {
  const whole = { start: 0, end: size - 1, partial: false };
  if (!rangeHeader) return whole;
  const ranges = parseRange(size, rangeHeader, { combine: true });
  if (ranges === -1) throw rangeNotSatisfiable(size);
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return whole;
  return { start: ranges[0].start, end: ranges[0].end, partial: true };
}

/** Content-Length, Accept-Ranges and (for a part) Content-Range of the answer. */
export function partHeaders(part: ServedPart, size: number): Record<string, string> {
  return {
    'Accept-Ranges': 'bytes',
    'Content-Length': String(part.end - part.start + 1),
    ...(part.partial ? { 'Content-Range': `bytes ${part.start}-${part.end}/${size}` } : {}),
  };
}

export const rangeNotSatisfiable = (size: number) =>
  new ApiError(
    416,
    'invalid_request_error',
    'range_not_satisfiable',
    `No part of the range can be served from the ${size} bytes.`,
    { param: 'Range', headers: { 'Content-Range': `bytes */${size}` } },
  );

/** The Range request header, as the OpenAPI document describes it. */
export const rangeHeader: Record<string, HeaderDescription> = {
  Range: {
    description:
      'One byte range, `bytes=start-end`, `bytes=start-` or `bytes=-suffix`: answered 206 with that part. Several ranges, or a header that is not a byte range, are ignored (the whole file, 200); a byte range that starts past the end (or cannot be read) is 416.',
    schema: { type: 'string', maxLength: 200 },
  },
};

const contentLength: HeaderDescription = {
  description: 'The number of bytes sent.',
  required: true,
  schema: { type: 'string', pattern: '^[0-9]+$' },
};
const acceptRanges: HeaderDescription = {
  description: 'Byte ranges may be asked for.',
  required: true,
  schema: { const: 'bytes' },
};

/** The 200, 206 and 416 answers of a route that serves a file of `mediaType` with ranges. */
export function fileResponses(mediaType: string, what: string): Record<number, RouteResponse> {
  const bytes = { type: 'string', format: 'binary' };
  return {
    200: {
      description: `${what}, whole.`,
      mediaType,
      schema: bytes,
      headers: { 'Content-Length': contentLength, 'Accept-Ranges': acceptRanges },
    },
    206: {
      description: 'The part of it the Range header asked for.',
      mediaType,
      schema: bytes,
      headers: {
        'Content-Length': contentLength,
        'Accept-Ranges': acceptRanges,
        'Content-Range': {
          description: '`bytes start-end/size`: which part this is.',
          required: true,
          schema: { type: 'string', pattern: '^bytes [0-9]+-[0-9]+/[0-9]+$' },
        },
      },
    },
    416: {
      description:
        'range_not_satisfiable: no byte range asked for can be served (it starts past the end); Content-Range says the size.',
      headers: {
        'Content-Range': {
          description: '`bytes */size`.',
          required: true,
          schema: { type: 'string', pattern: '^bytes \\*/[0-9]+$' },
        },
      },
    },
  };
}
