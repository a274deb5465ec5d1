import { defineEntity, p } from '@mikro-orm/core';

export const WORKSPACE_PLANS = ['trial', 'standard'] as const;
export type WorkspacePlan = (typeof WORKSPACE_PLANS)[number];

/** Defaults for a new workspace; every one is settable with `admin limits set`. */
export const DEFAULT_LIMITS = {
  requestsPerSecond: 50,
  callsPerMinute: 30,
  callsPerDay: 1000,
  /** Call minutes per calendar month (UTC). */
  minutesQuota: 10_000,
} as const;

const WorkspaceSchema = defineEntity({
  name: 'Workspace',
  tableName: 'workspaces',
  properties: {
    id: p.uuid().primary(),
    name: p.string().length(200),
    plan: p.string().length(20).$type<WorkspacePlan>(),
    requestsPerSecond: p.integer().default(DEFAULT_LIMITS.requestsPerSecond),
    callsPerMinute: p.integer().default(DEFAULT_LIMITS.callsPerMinute),
    callsPerDay: p.integer().default(DEFAULT_LIMITS.callsPerDay),
    minutesQuota: p.integer().default(DEFAULT_LIMITS.minutesQuota),
    /**
     * ISO 3166 alpha-2 codes this workspace may dial, or `['*']` for every country; null: the
     * deployment's DIALING_COUNTRIES (lib/calls/destination-policy.ts).
     */
    dialingCountries: p.array().$type<string[]>().nullable(),
    /**
     * Days a call's recording is kept after the call (telephony spec section 4): 0 keeps none once
     * the call is final; null keeps them until deleted (lib/recordings/retention.ts).
     */
    recordingRetentionDays: p.integer().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export class Workspace extends WorkspaceSchema.class {}
WorkspaceSchema.setClass(Workspace);

export { WorkspaceSchema };
