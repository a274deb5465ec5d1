import { Migrator } from '@mikro-orm/migrations';
import { defineConfig } from '@mikro-orm/postgresql';
import {
  Agent,
  ApiKey,
  Call,
  Event,
  IdempotencyRecord,
  PhoneNumber,
  RateLimitWindow,
  TranscriptEntry,
  User,
  WebhookDelivery,
  WebhookEndpoint,
  Workspace,
} from './entities/index.js';
import { migrationsList } from './migrations/index.js';

export const allEntities = [
  Agent,
  ApiKey,
  Call,
  Event,
  IdempotencyRecord,
  PhoneNumber,
  RateLimitWindow,
  TranscriptEntry,
  User,
  WebhookDelivery,
  WebhookEndpoint,
  Workspace,
];

/** The one ORM configuration, used by the API, the workers, the operator CLI and the tests. */
export function ormConfig(databaseUrl: string, options: { poolMax?: number } = {}) {
  return defineConfig({
    clientUrl: databaseUrl,
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
    pool: { min: 0, max: options.poolMax ?? 10 },
    allowGlobalContext: false,
    debug: false,
  });
}
