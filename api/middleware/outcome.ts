import type { Context } from 'koa';
import type { StreamedBody } from '../http/route.js';

/** A finished answer, serialized once: what is sent, and for idempotent requests what is stored. */
export interface Outcome {
  status: number;
  bodyText: string;
  headers: Record<string, string>;
  /** May an idempotent request store it (see ApiError.storable)? */
  storable: boolean;
  /** Stored instead of bodyText when set (secrets removed). */
  storedText?: string;
  /** Bytes sent instead of bodyText (a recording); only answers of routes that are not idempotent. */
  stream?: StreamedBody;
}

/** Whether an answer with this status may be stored for idempotent replay: all but 429 and 5xx. */
export const isStorableStatus = (status: number) => status < 500 && status !== 429;

export function sendOutcome(ctx: Context, outcome: Outcome) {
  ctx.status = outcome.status;
  if (outcome.stream) {
    // The body first: Koa drops a Content-Length set before a stream replaces another body.
    ctx.body = outcome.stream.body;
    ctx.type = outcome.stream.contentType;
  } else {
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = outcome.bodyText;
  }
  for (const [name, value] of Object.entries(outcome.headers)) ctx.set(name, value);
}
