import { openOrm } from '../db/orm.js';
import { createLogger } from '../lib/logger.js';
import { serveOperatorPort } from '../lib/metrics/metrics-server.js';
import { loadSettings } from '../lib/settings.js';
import { temporalConnectionOptions } from '../lib/temporal-connection.js';
import { flushTracing, startTracing } from '../lib/tracing/tracing.js';
import { createApp } from './app.js';
import { apiReadiness } from './health.js';
import { listen } from './server.js';
import { lazyTemporalClient } from './temporal-client.js';

// The API process: settings from the environment, the ORM, a Temporal client connected on first
// use, the HTTP server on HOST:PORT, and a graceful stop on SIGINT/SIGTERM (in-flight requests
// finish, connections close). Migrations are run by `npm start` before this starts.

const settings = loadSettings();
const logger = createLogger(settings.logLevel, { fields: { service: 'api' } });
startTracing('voice-agent-api');

if (settings.webhooksAllowPrivateTargets) {
  logger.warn(
    'WEBHOOKS_ALLOW_PRIVATE_TARGETS is on: webhook URLs may use http:// and private or loopback addresses. For development and tests only.',
  );
}

// Only `npm start` embeds a PostgreSQL (and passes its URL on): a production process without
// DATABASE_URL would otherwise get an empty database of its own, left running when it is killed.
if (!settings.databaseUrl) {
  logger.error('DATABASE_URL is not set: the API needs the service database (npm start sets it)');
  process.exit(1);
}
const orm = await openOrm(settings.databaseUrl);
const temporal = lazyTemporalClient({
  ...temporalConnectionOptions(settings),
  namespace: settings.temporalNamespace,
});
const app = createApp({ settings, orm, temporal: () => temporal.get(), logger });
// `npm run start:cluster` runs several API processes on one port (SO_REUSEPORT: the kernel spreads
// the connections over them); it sets API_REUSE_PORT=true in their environment.
const server = await listen(app, {
  host: settings.host,
  port: settings.port,
  reusePort: process.env.API_REUSE_PORT === 'true',
});
// METRICS_PORT moves /metrics off the public port to one of its own (with /healthz and /readyz).
const operatorPort = await serveOperatorPort(
  settings,
  apiReadiness({ settings, orm, temporal: () => temporal.get() }),
  logger,
);
logger.info('API listening', {
  url: `${server.url}/v1`,
  metrics: operatorPort && `${operatorPort.url}/metrics`,
});

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info('API stopping', { signal });
  try {
    await server.close();
    await operatorPort?.close();
    await flushTracing();
    await temporal.close();
    await orm.close(true);
    logger.info('API stopped');
    process.exit(0);
  } catch (error) {
    logger.error('API did not stop cleanly', { error });
    process.exit(1);
  }
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
