import { defineEntity, p } from '@mikro-orm/core';
import { Workspace } from './workspace.js';

/**
 * - in_progress: a request holds the key and nothing is committed yet;
 * - committed: the request's work and its answer committed together, but something after the
 *   commit (starting the call's workflow) is not confirmed yet; a retry finishes it, never redoes it;
 * - completed: the answer is final and is replayed.
 */
export type IdempotencyState = 'in_progress' | 'committed' | 'completed';

/**
 * The stored answer of a creating POST under an Idempotency-Key. The unique (workspace, key)
 * index decides races between API processes: the insert that wins runs the request.
 */
const IdempotencyRecordSchema = defineEntity({
  name: 'IdempotencyRecord',
  tableName: 'idempotency_records',
  uniques: [{ properties: ['workspace', 'key'] }],
  indexes: [{ properties: ['expiresAt'] }],
  properties: {
    id: p.uuid().primary(),
    workspace: () => p.manyToOne(Workspace).mapToPk().deleteRule('cascade'),
    key: p.string().length(255),
    /**
     * `POST /v1/agents`: a key reused on another endpoint is `idempotency_key_reused`. Text: the
     * path holds the request's ids as sent, of any length (a 300-character column made a long
     * garbled id a 500 instead of its 404).
     */
    endpoint: p.text(),
    /** SHA-256 of the canonical request body. */
    fingerprint: p.string().length(64),
    state: p.string().length(20).$type<IdempotencyState>(),
    responseStatus: p.integer().nullable(),
    /** The exact response bytes, secrets removed. */
    responseBody: p.text().nullable(),
    /** What the request created (the call of POST /calls), written in the same transaction. */
    resourceId: p.uuid().nullable(),
    /** Until then an in-progress record is held by a live request; after it, a crashed one. */
    lockedUntil: p.datetime(),
    createdAt: p.datetime().onCreate(() => new Date()),
    expiresAt: p.datetime(),
  },
});

export class IdempotencyRecord extends IdempotencyRecordSchema.class {}
IdempotencyRecordSchema.setClass(IdempotencyRecord);

export { IdempotencyRecordSchema };
