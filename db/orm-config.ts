import { Migrator } from '@mikro-orm/migrations';
import { defineConfig } from '@mikro-orm/postgresql';
import * as entities from './entities/index.js';
import { migrationsList } from './migrations/index.js';
import { ResilientPostgreSqlDriver, SessionAwareClient } from './resilient-driver.js';

/** Every entity, once: an entity missing here is unknown to the ORM (and to its migrations). */
export const allEntities = [
  entities.Agent,
  entities.ApiKey,
  entities.Call,
  entities.Campaign,
  entities.CampaignRecipient,
  entities.DashboardCredential,
  entities.DashboardInvite,
  entities.DashboardSession,
  entities.Event,
  entities.IdempotencyRecord,
  entities.PhoneNumber,
  entities.RateLimitWindow,
  entities.SignInAttemptWindow,
  entities.TestRun,
  entities.TestRunResult,
  entities.ToolCall,
  entities.TranscriptEntry,
  entities.User,
  entities.WebhookDelivery,
  entities.WebhookDeliveryAttempt,
  entities.WebhookEndpoint,
  entities.WebhookRecovery,
  entities.WebhookRecoveryItem,
  entities.Workspace,
];

/** How long a query waits for a free pool connection (or a new one) before it fails. */
export const POOL_ACQUIRE_TIMEOUT_MS = 10_000;

/** The one ORM configuration, used by the API, the workers, the operator CLI and the tests. */
export function ormConfig(databaseUrl: string, options: { poolMax?: number } = {}) {
  return defineConfig({
    clientUrl: databaseUrl,
    // Gives back connections lost in the middle of a transaction (db/resilient-driver.ts).
    driver: ResilientPostgreSqlDriver,
    entities: allEntities,
    extensions: [Migrator],
    migrations: {
      tableName: 'schema_migrations',
      path: 'db/migrations',
      pathTs: 'db/migrations',
      emit: 'ts',
      snapshot: false,
      transactional: true,
      allOrNothing: true,
      migrationsList,
      silent: true,
    },
    pool: { min: 0, max: options.poolMax ?? 10, idleTimeoutMillis: 30_000 },
    // A database that is down or saturated fails a query within seconds instead of queueing it
    // for ever; TCP keep-alive finds connections whose server vanished without closing them.
    driverOptions: {
      connectionTimeoutMillis: POOL_ACQUIRE_TIMEOUT_MS,
      keepAlive: true,
      Client: SessionAwareClient,
    },
    allowGlobalContext: false,
    debug: false,
  });
}
