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
import { isScope, SCOPES } from './scopes.js';

// Operator actions on workspaces, people, keys, numbers and limits: what the operator CLI
// (scripts/admin.ts) does, and what tests use to set up their fixtures.

/** A refusal worth a one-line message to the operator (bad flag value, unknown id). */
export class OperatorError extends Error {}

const E164 = /^\+[1-9]\d{6,14}$/;

export async function createWorkspace(em: EntityManager, input: { name: string; plan?: string }) {
  const plan = (input.plan ?? 'standard') as WorkspacePlan;
  if (!WORKSPACE_PLANS.includes(plan))
    throw new OperatorError(`plan must be one of ${WORKSPACE_PLANS.join(', ')}`);
  if (!input.name.trim()) throw new OperatorError('name must not be empty');
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
  if (!/^[^\s@]+@[^\s@]+$/.test(input.email))
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
  if (!input.name.trim()) throw new OperatorError('name must not be empty');
  const scopes = [...new Set(input.scopes.map((s) => s.trim()).filter(Boolean))];
  if (scopes.length === 0) throw new OperatorError('at least one scope is needed');
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length)
    throw new OperatorError(`unknown scope ${unknown.join(', ')}; scopes are ${SCOPES.join(', ')}`);
  if (input.expiresAt && Number.isNaN(input.expiresAt.getTime()))
    throw new OperatorError('expires-at is not a date');
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
  if (!E164.test(input.number))
    throw new OperatorError(`number must be E.164 (+ and 7 to 15 digits), got ${input.number}`);
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
}

export function limitsOf(workspace: Workspace): WorkspaceLimits {
  return {
    requests_per_second: workspace.requestsPerSecond,
    calls_per_minute: workspace.callsPerMinute,
    calls_per_day: workspace.callsPerDay,
    minutes_quota: workspace.minutesQuota,
  };
}

export async function setLimits(
  em: EntityManager,
  input: {
    workspaceId: string;
    requestsPerSecond?: number;
    callsPerMinute?: number;
    callsPerDay?: number;
    minutesQuota?: number;
  },
) {
  const workspace = await requireWorkspace(em, input.workspaceId);
  const changes: [
    keyof typeof input,
    'requestsPerSecond' | 'callsPerMinute' | 'callsPerDay' | 'minutesQuota',
  ][] = [
    ['requestsPerSecond', 'requestsPerSecond'],
    ['callsPerMinute', 'callsPerMinute'],
    ['callsPerDay', 'callsPerDay'],
    ['minutesQuota', 'minutesQuota'],
  ];
  for (const [field, column] of changes) {
    const value = input[field];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      throw new OperatorError(`${field} must be a whole number of at least 0`);
    }
    workspace[column] = value;
  }
  await em.flush();
  return workspace;
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

export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}
