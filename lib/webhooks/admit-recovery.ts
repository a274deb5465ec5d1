import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { WebhookEndpoint, WebhookEndpointStatus, WebhookRecovery } from '../../db/entities/index.js';
import { createRecovery, endUnstartedRecovery, RECOVERY_WINDOW_MS } from './recovery.js';

// Admission of a recovery (POST /webhooks/{id}/recover, docs/webhooks.md): the rules before a
// recovery is recorded, each refusal a code the caller maps to its own answer (the API to the
// spec's errors), as lib/calls/admit-outbound-call.ts does for calls. In this order:
//   1. the period: since at most RECOVERY_WINDOW_DAYS back, not in the future; until not before since
//   2. the endpoint is active                                     endpoint_not_active
//   3. no other recovery of the endpoint runs                     recovery_in_progress
//      (one whose API process stopped before starting its workflow is ended first)

export type RecoveryPeriodRefusal =
  | { code: 'since_too_old' }
  | { code: 'since_in_future' }
  | { code: 'until_before_since' };

export type RecoveryRefusal =
  | RecoveryPeriodRefusal
  | { code: 'endpoint_not_active'; status: WebhookEndpointStatus }
  | { code: 'recovery_in_progress' };

export interface RecoveryRequest {
  since: Date;
  until: Date | null;
  now: Date;
}

export type RecoveryAdmission<T> =
  | { admitted: true; recovery: WebhookRecovery; alongside: T }
  | { admitted: false; refusal: RecoveryRefusal };

/** Rule 1, checked before the endpoint is looked up: null when the period may be recovered. */
export function recoveryPeriodRefusal({ since, until, now }: RecoveryRequest): RecoveryPeriodRefusal | null {
  if (since.getTime() < now.getTime() - RECOVERY_WINDOW_MS) return { code: 'since_too_old' };
  if (since > now) return { code: 'since_in_future' };
  if (until && until < since) return { code: 'until_before_since' };
  return null;
}

/**
 * Rules 2 and 3, then the running recovery and its events, committed in one transaction with
 * what `alongside` writes in it (the API: its answer under the Idempotency-Key). `temporal`
 * tells whether a running recovery's workflow exists; null when Temporal cannot be reached
 * (the running recovery then counts as running).
 */
export async function admitRecovery<T>(
  em: EntityManager,
  endpoint: WebhookEndpoint,
  request: RecoveryRequest,
  temporal: () => Promise<Client | null>,
  alongside: (tx: EntityManager, recovery: WebhookRecovery) => Promise<T>,
): Promise<RecoveryAdmission<T>> {
  if (endpoint.status !== 'active') {
    return { admitted: false, refusal: { code: 'endpoint_not_active', status: endpoint.status } };
  }
  const record = () =>
    em.transactional(async (tx): Promise<RecoveryAdmission<T>> => {
      const recovery = await createRecovery(tx, { endpoint, ...request });
      return { admitted: true, recovery, alongside: await alongside(tx, recovery) };
    });
  const inProgress: RecoveryAdmission<T> = { admitted: false, refusal: { code: 'recovery_in_progress' } };
  try {
    return await record();
  } catch (error) {
    if (!(error instanceof UniqueConstraintViolationException)) throw error;
  }
  // Another recovery runs, unless it is one whose API process stopped before starting it.
  const client = await temporal();
  if (!client || !(await endUnstartedRecovery(em, client, endpoint.id, new Date()))) return inProgress;
  try {
    return await record();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) return inProgress;
    throw error;
  }
}
