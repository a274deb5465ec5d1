import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  ApiKey,
  PhoneNumber,
  USER_ROLES,
  User,
  type UserRole,
  WORKSPACE_PLANS,
  Workspace,
  type WorkspacePlan,
} from '../db/entities/index.js';
import { generateApiKeySecret, hashApiKeySecret } from './api-key-secret.js';
import { type DialingCountries, parseDialingCountries } from './calls/destination-policy.js';
import { endSessionsOf } from './dashboard/end-sessions.js';
import { isE164 } from './e164.js';
import { isScope, SCOPES } from './scopes.js';
import { isUuid } from './uuid.js';

// Operator actions on workspaces, people, keys, numbers and limits: what the operator CLI
// (scripts/admin.ts) does, and what tests use to set up their fixtures.

/** A refusal worth a one-line message to the operator (bad flag value, unknown id). */
export class OperatorError extends Error {}

/** PostgreSQL `integer`, the type of every limit column. */
const MAX_LIMIT = 2_147_483_647;

export async function createWorkspace(em: EntityManager, input: { name: string; plan?: string }) {
  const plan = (input.plan ?? 'standard') as WorkspacePlan;
  if (!WORKSPACE_PLANS.includes(plan))
    throw new OperatorError(`plan must be one of ${WORKSPACE_PLANS.join(', ')}`);
  requireText('name', input.name, 200);
  const workspace = em.create(Workspace, { id: randomUUID(), name: input.name, plan });
  await em.flush();
  return workspace;
}

export async function createUser(
  em: EntityManager,
  input: { workspaceId: string; email: string; role: string },
) {
  const role = parseRole(input.role);
  await requireWorkspace(em, input.workspaceId);
  if (!/^[^\s@]+@[^\s@]+$/.test(input.email) || input.email.length > 320)
    throw new OperatorError(`email "${input.email}" is not an address`);
  const existing = await em.findOne(User, { workspace: input.workspaceId, email: input.email.toLowerCase() });
  if (existing) throw new OperatorError(`a user with email ${input.email} already exists in that workspace`);
  const user = em.create(User, {
    id: randomUUID(),
    workspace: input.workspaceId,
    email: input.email.toLowerCase(),
    role,
  });
  await em.flush();
  return user;
}

export async function setUserRole(em: EntityManager, input: { userId: string; role: string }) {
  const role = parseRole(input.role);
  const user = isUuid(input.userId) ? await em.findOne(User, { id: input.userId }) : null;
  if (!user) throw new OperatorError(`no user with id ${input.userId}`);
  user.role = role;
  await em.flush();
  return user;
}

/**
 * Removes a person from a workspace: their membership goes, and with it (by the foreign keys) the
 * API keys they made and their invites; every dashboard session of theirs ends, in the same
 * transaction, so no signed-in page outlives the removal (they sign in again for other workspaces).
 */
export async function removeUser(em: EntityManager, input: { userId: string }) {
  const user = isUuid(input.userId) ? await em.findOne(User, { id: input.userId }) : null;
  if (!user) throw new OperatorError(`no user with id ${input.userId}`);
  await em.transactional(async (tx) => {
    await endSessionsOf(tx, user.email);
    await tx.nativeDelete(User, { id: user.id });
  });
  return user;
}

export async function createApiKey(
  em: EntityManager,
  input: { workspaceId: string; userId: string; name: string; scopes: string[]; expiresAt?: Date | null },
): Promise<{ key: ApiKey; secret: string }> {
  await requireWorkspace(em, input.workspaceId);
  const user = isUuid(input.userId) ? await em.findOne(User, { id: input.userId }) : null;
  if (!user || user.workspace !== input.workspaceId) {
    throw new OperatorError(`no user with id ${input.userId} in workspace ${input.workspaceId}`);
  }
  if (!['owner', 'admin'].includes(user.role)) {
    throw new OperatorError(`only owners and admins create keys; ${user.email} is ${user.role}`);
  }
  requireText('name', input.name, 200);
  const scopes = [...new Set(input.scopes.map((s) => s.trim()).filter(Boolean))];
  if (scopes.length === 0) throw new OperatorError('at least one scope is needed');
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length)
    throw new OperatorError(`unknown scope ${unknown.join(', ')}; scopes are ${SCOPES.join(', ')}`);
  if (input.expiresAt && Number.isNaN(input.expiresAt.getTime()))
    throw new OperatorError('expires-at is not a date');
  // A key that is born expired can only be a typo.
  if (input.expiresAt && input.expiresAt.getTime() <= Date.now())
    throw new OperatorError(`expires-at ${input.expiresAt.toISOString()} is in the past`);
  const secret = generateApiKeySecret();
  const key = em.create(ApiKey, {
    id: randomUUID(),
    workspace: input.workspaceId,
    createdBy: user.id,
    name: input.name,
    secretHash: hashApiKeySecret(secret),
    scopes,
    expiresAt: input.expiresAt ?? null,
  });
  await em.flush();
  return { key, secret };
}

export async function revokeApiKey(em: EntityManager, input: { keyId: string }) {
  const key = isUuid(input.keyId) ? await em.findOne(ApiKey, { id: input.keyId }) : null;
  if (!key) throw new OperatorError(`no key with id ${input.keyId}`);
  key.revokedAt ??= new Date();
  await em.flush();
  return key;
}

export async function createPhoneNumber(
  em: EntityManager,
  input: { workspaceId: string; number: string; label?: string | null },
) {
  await requireWorkspace(em, input.workspaceId);
  if (!isE164(input.number))
    throw new OperatorError(`number must be E.164 (+ and 7 to 15 digits), got ${input.number}`);
  if (input.label != null) requireText('label', input.label, 200);
  if (await em.findOne(PhoneNumber, { number: input.number })) {
    throw new OperatorError(`number ${input.number} is already registered`);
  }
  const phoneNumber = em.create(PhoneNumber, {
    id: randomUUID(),
    workspace: input.workspaceId,
    number: input.number,
    label: input.label ?? null,
    agent: null,
    status: 'active',
    capabilities: ['voice'],
  });
  await em.flush();
  return phoneNumber;
}

export interface WorkspaceLimits {
  requests_per_second: number;
  calls_per_minute: number;
  calls_per_day: number;
  minutes_quota: number;
  /** The countries its calls may go to (`*`: every one), its own or the deployment's. */
  dialing_countries: string[] | '*';
  /** `workspace` when set with --dialing-countries, `deployment` (DIALING_COUNTRIES) otherwise. */
  dialing_countries_from: 'workspace' | 'deployment';
  /** Days recordings are kept after their call (0: none once it is final); null: until deleted. */
  recording_retention_days: number | null;
}

/** Its limits as operators see them; the dialing countries resolved against the deployment's. */
export function limitsOf(workspace: Workspace, deploymentCountries: DialingCountries): WorkspaceLimits {
  const countries = dialingCountriesOf(workspace, deploymentCountries);
  return {
    requests_per_second: workspace.requestsPerSecond,
    calls_per_minute: workspace.callsPerMinute,
    calls_per_day: workspace.callsPerDay,
    minutes_quota: workspace.minutesQuota,
    dialing_countries: countries === '*' ? '*' : [...countries],
    dialing_countries_from: workspace.dialingCountries ? 'workspace' : 'deployment',
    recording_retention_days: workspace.recordingRetentionDays ?? null,
  };
}

/** The countries a workspace's calls may go to: its own, else the deployment's. */
export function dialingCountriesOf(
  workspace: Pick<Workspace, 'dialingCountries'>,
  deploymentCountries: DialingCountries,
): DialingCountries {
  const own = workspace.dialingCountries;
  if (!own) return deploymentCountries;
  // `{*}` in the column is every country.
  return own.includes('*') ? '*' : own;
}

/** The countries the calls of workspace `workspaceId` may go to now (read from the database). */
export async function loadDialingCountries(
  em: EntityManager,
  workspaceId: string,
  deploymentCountries: DialingCountries,
): Promise<DialingCountries> {
  const workspace = await em.findOneOrFail(Workspace, { id: workspaceId });
  return dialingCountriesOf(workspace, deploymentCountries);
}

type LimitColumn = 'requestsPerSecond' | 'callsPerMinute' | 'callsPerDay' | 'minutesQuota';

/** Each limit column with the name operators see (JSON output, error messages). */
const LIMIT_NAMES: [LimitColumn, keyof WorkspaceLimits][] = [
  ['requestsPerSecond', 'requests_per_second'],
  ['callsPerMinute', 'calls_per_minute'],
  ['callsPerDay', 'calls_per_day'],
  ['minutesQuota', 'minutes_quota'],
];

/** Changes the limits given and leaves the others; all are validated before any is written. */
export async function setLimits(
  em: EntityManager,
  input: { workspaceId: string } & Partial<Record<LimitColumn, number>> & {
      /** `NO,SE`, `*`, or `default` (back to the deployment's DIALING_COUNTRIES). */
      dialingCountries?: string;
      /** Whole days from 0 (none kept once the call is final), or `none` (kept until deleted). */
      recordingRetentionDays?: string;
    },
) {
  const workspace = await requireWorkspace(em, input.workspaceId);
  for (const [column, name] of LIMIT_NAMES) {
    const value = input[column];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 0 || value > MAX_LIMIT) {
      throw new OperatorError(`${name} must be a whole number from 0 to ${MAX_LIMIT}`);
    }
  }
  let countries: string[] | null | undefined;
  if (input.dialingCountries !== undefined) {
    if (input.dialingCountries.trim().toLowerCase() === 'default') countries = null;
    else {
      try {
        const parsed = parseDialingCountries(input.dialingCountries, 'dialing_countries');
        countries = parsed === '*' ? ['*'] : [...parsed];
      } catch (error) {
        throw new OperatorError((error as Error).message);
      }
    }
  }
  const retention =
    input.recordingRetentionDays === undefined ? undefined : retentionDaysOf(input.recordingRetentionDays);
  for (const [column] of LIMIT_NAMES) {
    const value = input[column];
    if (value !== undefined) workspace[column] = value;
  }
  if (countries !== undefined) workspace.dialingCountries = countries;
  if (retention !== undefined) workspace.recordingRetentionDays = retention;
  await em.flush();
  return workspace;
}

/** The longest retention that can be set: ten years. */
export const MAX_RECORDING_RETENTION_DAYS = 3650;

/** `--recording-retention-days`: a whole number of days, or `none` (kept until deleted: null). */
function retentionDaysOf(text: string): number | null {
  const value = text.trim().toLowerCase();
  if (value === 'none') return null;
  const days = /^\d{1,4}$/.test(value) ? Number(value) : Number.NaN;
  if (!(days <= MAX_RECORDING_RETENTION_DAYS)) {
    throw new OperatorError(
      `recording_retention_days must be a whole number of days from 0 to ${MAX_RECORDING_RETENTION_DAYS}, or none`,
    );
  }
  return days;
}

/** The workspace, for `admin limits show`. */
export function findWorkspace(em: EntityManager, workspaceId: string): Promise<Workspace> {
  return requireWorkspace(em, workspaceId);
}

/** Fictional numbers (the 555-01xx block) that bootstrap gives demo workspaces, first free ones first. */
const DEMO_NUMBERS = Array.from({ length: 100 }, (_, i) => `+155555501${String(i).padStart(2, '0')}`);

/**
 * A ready-to-use demo: a workspace, its owner, a key with every scope and two numbers, made in
 * one transaction. Every run makes a new set, because a key secret can only be shown when made.
 */
export async function bootstrapDemoWorkspace(em: EntityManager) {
  return em.transactional(async (tx) => {
    const workspace = await createWorkspace(tx, { name: 'Demo workspace', plan: 'standard' });
    const owner = await createUser(tx, {
      workspaceId: workspace.id,
      email: 'owner@demo.example',
      role: 'owner',
    });
    const { key, secret } = await createApiKey(tx, {
      workspaceId: workspace.id,
      userId: owner.id,
      name: 'Demo key (every scope)',
      scopes: [...SCOPES],
    });
    const taken = new Set(
      (await tx.find(PhoneNumber, { number: { $in: DEMO_NUMBERS } })).map((n) => n.number),
    );
    const free = DEMO_NUMBERS.filter((n) => !taken.has(n)).slice(0, 2);
    if (free.length < 2) {
      throw new OperatorError(
        `the demo numbers ${DEMO_NUMBERS[0]} to ${DEMO_NUMBERS.at(-1)} are taken; use number create`,
      );
    }
    const numbers: PhoneNumber[] = [];
    for (const [i, number] of free.entries()) {
      numbers.push(
        await createPhoneNumber(tx, { workspaceId: workspace.id, number, label: `Demo line ${i + 1}` }),
      );
    }
    return { workspace, owner, key, secret, numbers };
  });
}

function requireText(field: string, value: string, maxLength: number): void {
  if (!value.trim()) throw new OperatorError(`${field} must not be empty`);
  if (value.length > maxLength) throw new OperatorError(`${field} must be at most ${maxLength} characters`);
}

async function requireWorkspace(em: EntityManager, workspaceId: string): Promise<Workspace> {
  const workspace = isUuid(workspaceId) ? await em.findOne(Workspace, { id: workspaceId }) : null;
  if (!workspace) throw new OperatorError(`no workspace with id ${workspaceId}`);
  return workspace;
}

function parseRole(role: string): UserRole {
  if (!USER_ROLES.includes(role as UserRole))
    throw new OperatorError(`role must be one of ${USER_ROLES.join(', ')}`);
  return role as UserRole;
}
