import type { Context } from 'koa';

/** A finished answer, serialized once: what is sent, and for idempotent requests what is stored. */
export interface Outcome {
  status: number;
  bodyText: string;
  headers: Record<string, string>;
  /** May an idempotent request store it (see ApiError.storable)? */
  storable: boolean;
  /** Stored instead of bodyText when set (secrets removed). */
  storedText?: string;
}

/** Whether an answer with this status may be stored for idempotent replay: all but 429 and 5xx. */
export const isStorableStatus = (status: number) => status < 500 && status !== 429;

export function sendOutcome(ctx: Context, outcome: Outcome) {
  ctx.status = outcome.status;
  for (const [name, value] of Object.entries(outcome.headers)) ctx.set(name, value);
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = outcome.bodyText;
}
