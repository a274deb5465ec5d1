import { createHash, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { IdempotencyState } from '../../db/entities/idempotency-record.js';
import { idempotentReplays } from '../../lib/metrics/service-metrics.js';
import { idempotencyKeyReused, idempotencyRequestInProgress, parameterInvalid } from '../http/errors.js';
import type { ApiContext, RouteResult } from '../http/route.js';
import type { Outcome } from './outcome.js';

// One mechanism for every creating POST that takes an Idempotency-Key. The database decides,
// not process memory: the unique (workspace_id, key) index lets exactly one request claim a key,
// across any number of API processes.
//
// - claimed: the request runs. A handler whose work commits to the database stores its answer in
//   the same transaction (storeAnswerWithWork), so no failure between the commit and the answer
//   can make a retry do the work again. Afterwards a storable answer (2xx, 4xx other than 429,
//   call_outcome_unknown) is saved byte for byte; anything else (429, 5xx, refusals whose reason
//   can change) deletes the claim so a retry runs again, unless work was committed.
// - committed but not confirmed (POST /calls: the call row is in, the workflow start is not known
//   to have happened): a retry after LOCK_MS resumes the request through the route's `resume`
//   (start the same call's workflow again, which cannot dial twice) and answers the stored answer.
// - same key, same endpoint and fingerprint, finished: the saved bytes again, with
//   Idempotent-Replayed: true.
// - same key, other endpoint or body: 409 idempotency_key_reused.
// - same key while the first still runs: 409 idempotency_request_in_progress. A claim whose
//   process died is taken over after LOCK_MS (run again when nothing was committed, resumed when
//   something was).
// - keys expire 24 h after first use; an expired key runs as new.

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const MAX_KEY_LENGTH = 255;
export const TTL_MS = 24 * 60 * 60 * 1000;
export const LOCK_MS = 60_000;

/** The Idempotency-Key header, validated; undefined when absent. */
export function idempotencyKeyOf(ctx: ApiContext): string | undefined {
  const value = ctx.headers['idempotency-key'];
  if (value === undefined) return undefined;
  if (Array.isArray(value) || value.length === 0 || value.length > MAX_KEY_LENGTH) {
    throw parameterInvalid(
      IDEMPOTENCY_HEADER,
      `${IDEMPOTENCY_HEADER} must be 1 to ${MAX_KEY_LENGTH} characters.`,
    );
  }
  return value;
}

/** SHA-256 over the query and the body (key order and whitespace ignored when the body is JSON). */
export function fingerprintOf(query: Record<string, unknown>, rawBody: string): string {
  let text: string;
  try {
    const body = rawBody.trim() === '' ? rawBody : { json: JSON.parse(rawBody) };
    text = canonicalJson([query, body]);
  } catch {
    // Not JSON, or nested too deeply to canonicalize (the stack runs out): the raw text is the
    // fingerprint. Such a body is refused by validation, and that refusal is stored as usual.
    text = canonicalJson([query, rawBody]);
  }
  return createHash('sha256').update(text).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

interface RecordRow {
  id: string;
  endpoint: string;
  fingerprint: string;
  state: IdempotencyState;
  response_status: number | null;
  response_body: string | null;
}

/** What a request committed under its key, handed to the route's `resume`. */
export interface CommittedAnswer {
  resourceId: string | null;
  status: number;
  bodyText: string;
}

/**
 * Inside the transaction that does a request's work: stores the answer with the work, so both
 * commit or neither does. `confirmed: false` when a step after the commit is still to come (the
 * record stays `committed` until the request finishes; a retry resumes it, never reruns it).
 * Throws idempotency_request_in_progress, rolling the work back, when the claim was taken over.
 */
export async function storeAnswerWithWork(
  em: EntityManager,
  ctx: ApiContext,
  result: RouteResult,
  options: { resourceId?: string; confirmed?: boolean } = {},
): Promise<void> {
  const claimId = ctx.state.idempotencyClaimId;
  if (!claimId) return;
  const updated = await em.execute<{ affectedRows: number }>(
    `update idempotency_records
        set state = ?, response_status = ?, response_body = ?, resource_id = ?
      where id = ? and state = 'in_progress'`,
    [
      options.confirmed === false ? 'committed' : 'completed',
      result.status,
      JSON.stringify(result.storedBody ?? result.body),
      options.resourceId ?? null,
      claimId,
    ],
    'run',
  );
  if (updated.affectedRows !== 1) throw idempotencyRequestInProgress();
}

/**
 * Undoes storeAnswerWithWork(…, { confirmed: false }) inside the transaction that undoes the
 * work (the step after the commit failed, so the work is removed again): the record goes back to
 * `in_progress`, so the request's refusal (not stored) releases the key and a retry runs anew.
 */
export async function withdrawAnswerWithWork(em: EntityManager, ctx: ApiContext): Promise<void> {
  const claimId = ctx.state.idempotencyClaimId;
  if (!claimId) return;
  await em.execute(
    `update idempotency_records
        set state = 'in_progress', response_status = null, response_body = null, resource_id = null
      where id = ? and state = 'committed'`,
    [claimId],
    'run',
  );
}

/**
 * Runs `run` at most once per (workspace, key) within 24 h, or answers from the stored record.
 * `run` must turn every failure into an Outcome (it never throws for refusals).
 */
export async function runIdempotently(
  ctx: ApiContext,
  request: { key: string; fingerprint: string },
  run: () => Promise<Outcome>,
  resume: (committed: CommittedAnswer) => Promise<Outcome>,
): Promise<Outcome> {
  const connection = ctx.state.deps.orm.em.getConnection();
  const workspaceId = ctx.state.auth.workspaceId;
  const endpoint = `${ctx.method} ${ctx.path}`;
  const claimId = randomUUID();

  for (let attempt = 0; attempt < 3; attempt++) {
    const claimed = await connection.execute<{ id: string }[]>(
      `insert into idempotency_records
         (id, workspace_id, key, endpoint, fingerprint, state, response_status, response_body,
          locked_until, created_at, expires_at)
       values (?, ?, ?, ?, ?, 'in_progress', null, null,
               now() + (? * interval '1 millisecond'), now(), now() + (? * interval '1 millisecond'))
       on conflict (workspace_id, key) do update set
         id = excluded.id, endpoint = excluded.endpoint, fingerprint = excluded.fingerprint,
         state = 'in_progress', response_status = null, response_body = null,
         locked_until = excluded.locked_until, created_at = excluded.created_at,
         expires_at = excluded.expires_at
       where idempotency_records.expires_at <= now()
          or (idempotency_records.state = 'in_progress'
              and idempotency_records.locked_until <= now()
              and idempotency_records.endpoint = excluded.endpoint
              and idempotency_records.fingerprint = excluded.fingerprint)
       returning id`,
      [claimId, workspaceId, request.key, endpoint, request.fingerprint, LOCK_MS, TTL_MS],
      'all',
    );
    if (claimed.length === 1) {
      ctx.state.idempotencyClaimId = claimId;
      return finish(ctx, claimId, await run());
    }

    const [existing] = await connection.execute<RecordRow[]>(
      `select id, endpoint, fingerprint, state, response_status, response_body
         from idempotency_records
        where workspace_id = ? and key = ? and expires_at > now()`,
      [workspaceId, request.key],
      'all',
    );
    if (!existing) continue; // deleted or expired in between: claim again
    if (existing.endpoint !== endpoint || existing.fingerprint !== request.fingerprint) {
      throw idempotencyKeyReused();
    }
    if (
      existing.state === 'completed' &&
      existing.response_status !== null &&
      existing.response_body !== null
    ) {
      return replay(existing.response_status, existing.response_body);
    }
    if (existing.state === 'committed') {
      // The work is in; whoever committed it has gone quiet for LOCK_MS: finish it here.
      const [taken] = await connection.execute<(CommittedAnswerRow & { id: string })[]>(
        `update idempotency_records set id = ?, locked_until = now() + (? * interval '1 millisecond')
          where id = ? and state = 'committed' and locked_until <= now()
          returning id, resource_id, response_status, response_body`,
        [claimId, LOCK_MS, existing.id],
        'all',
      );
      if (taken) {
        ctx.state.idempotencyClaimId = claimId;
        return finish(
          ctx,
          claimId,
          await resume({
            resourceId: taken.resource_id,
            status: taken.response_status,
            bodyText: taken.response_body,
          }),
        );
      }
    }
    throw idempotencyRequestInProgress();
  }
  throw idempotencyRequestInProgress();
}

interface CommittedAnswerRow {
  resource_id: string | null;
  response_status: number;
  response_body: string;
}

/** Tries to record how the request ended a few times over about a second before giving up. */
const FINISH_ATTEMPTS = 4;
const FINISH_BACKOFF_MS = 150;

async function finish(ctx: ApiContext, claimId: string, outcome: Outcome): Promise<Outcome> {
  const connection = ctx.state.deps.orm.em.getConnection();
  for (let attempt = 1; ; attempt++) {
    try {
      if (outcome.storable) {
        await connection.execute(
          `update idempotency_records set state = 'completed', response_status = ?, response_body = ?
            where id = ?`,
          [outcome.status, outcome.storedText ?? outcome.bodyText, claimId],
          'run',
        );
      } else {
        // Nothing committed: forget the claim, a retry runs again. Work committed but its answer
        // not final: a retry may resume it at once.
        await connection.execute(
          `with unlocked as (
             update idempotency_records set locked_until = now() where id = ? and state = 'committed'
           )
           delete from idempotency_records where id = ? and state = 'in_progress'`,
          [claimId, claimId],
          'run',
        );
      }
      return outcome;
    } catch (error) {
      if (attempt >= FINISH_ATTEMPTS) {
        // The answer goes out anyway. The record stays as the request left it: a retry after
        // LOCK_MS runs again when nothing was committed, or resumes what was.
        ctx.state.logger.error('idempotency record not updated', { error });
        return outcome;
      }
      await new Promise((resolve) => setTimeout(resolve, FINISH_BACKOFF_MS * 2 ** (attempt - 1)));
    }
  }
}

/** A stored answer as sent again: `Idempotent-Replayed: true`, and an error's first request id. */
export function replay(status: number, bodyText: string): Outcome {
  idempotentReplays.inc();
  const headers: Record<string, string> = { 'Idempotent-Replayed': 'true' };
  if (status >= 400) {
    // A replayed error carries the first request's request_id; the header must equal it.
    const requestId = (JSON.parse(bodyText) as { request_id?: unknown }).request_id;
    if (typeof requestId === 'string') headers['X-Request-Id'] = requestId;
  }
  return { status, bodyText, headers, storable: false };
}
