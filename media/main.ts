import { hostname } from 'node:os';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { openOrm } from '../db/orm.js';
import { SileroVoiceActivity } from '../lib/audio/voice-activity.js';
import { createLogger } from '../lib/logger.js';
import { ormPool, watchPool } from '../lib/metrics/database-metrics.js';
import { watchGatewayCalls } from '../lib/metrics/gateway-metrics.js';
import { serveOperatorPort } from '../lib/metrics/metrics-server.js';
import { sdkMetricsTelemetry } from '../lib/metrics/temporal-sdk-metrics.js';
import { recordingStoreFor } from '../lib/recordings/recording-store-from-settings.js';
import { loadSettings } from '../lib/settings.js';
import { endOfTurnFromSettings } from '../lib/speech/end-of-turn.js';
import { speechFromSettings } from '../lib/speech/from-settings.js';
import { temporalConnectionOptions } from '../lib/temporal-connection.js';
import { clientTracingInterceptors, flushTracing, startTracing } from '../lib/tracing/tracing.js';
import { voiceRuntimeFromSettings } from '../lib/voice-runtime/from-settings.js';
import { CallSessions } from './call-sessions.js';
import { createControlServer } from './control-server.js';
import type { GatewayContext } from './gateway-context.js';
import { GatewayDrain } from './gateway-drain.js';
import { createMediaGateway, gatewayReadiness, MEDIA_STREAMS_PATH } from './media-gateway.js';
import { createMediaSessionWorker } from './media-session-worker.js';
import { RecordingUploads } from './recording-uploads.js';

// The media gateway process (../spec/voice-media-v1.md section 1): it holds the audio of live
// calls and runs their turn loop. `npm start` and `npm run start:cluster` start it when speech is
// configured, with DATABASE_URL, MEDIA_STREAMS_TOKEN, MEDIA_CONTROL_TOKEN and the speech settings;
// it serves ws://HOST:MEDIA_PORT/media/streams on its public port and the workers' control API
// and the carrier's callbacks on MEDIA_CONTROL_LISTEN (loopback by default).

const settings = loadSettings();
const logger = createLogger(settings.logLevel, { fields: { service: 'media' } });
startTracing('voice-agent-media');
Runtime.install({
  logger: new DefaultLogger(settings.logLevel === 'debug' ? 'DEBUG' : 'WARN'),
  telemetryOptions: await sdkMetricsTelemetry(),
  // The signals are this process's own (drain on SIGTERM, below): the SDK's default shuts the worker
  // down on SIGTERM at once, which cancelled every live call's media session (each call then ended
  // agent_error) before the drain could let them finish.
  shutdownSignals: [],
});

const { streamsToken, controlToken } = settings.media;
const speech = speechFromSettings(settings);
const missing = [
  !settings.databaseUrl && 'DATABASE_URL',
  !streamsToken && 'MEDIA_STREAMS_TOKEN',
  !controlToken && 'MEDIA_CONTROL_TOKEN',
  streamsToken && streamsToken === controlToken && 'MEDIA_CONTROL_TOKEN different from MEDIA_STREAMS_TOKEN',
  !(speech.stt && speech.tts) &&
    'speech (VOICE_SPEECH=local through npm start, or VOICE_STT_URL and VOICE_TTS_URL)',
].filter(Boolean);
if (missing.length) {
  logger.error('the media gateway needs these settings (npm start sets them)', { missing });
  process.exit(1);
}

/** Where stream clients reach this gateway: its host as others see it (not a wildcard address). */
const reachableHost = ['0.0.0.0', '::', ''].includes(settings.host) ? hostname() : settings.host;
const orm = await openOrm(settings.databaseUrl!);
const connection = await NativeConnection.connect(temporalConnectionOptions(settings));
const temporal = new Client({
  interceptors: clientTracingInterceptors(),
  connection: await Connection.connect(temporalConnectionOptions(settings)),
  namespace: settings.temporalNamespace,
});
const sessions = new CallSessions();
const gateway: GatewayContext = {
  settings,
  streamsToken: streamsToken!,
  controlToken: controlToken!,
  // Its name on the calls it holds, as the workers reach it (MEDIA_CONTROL_URL).
  controlUrl: settings.media.controlUrl,
  orm,
  temporal,
  stt: speech.stt!,
  tts: speech.tts!,
  ...endOfTurnFromSettings(settings),
  voiceActivity: () => SileroVoiceActivity.load(),
  sessions,
  drain: new GatewayDrain(),
  // RECORDINGS_STORE=s3: finished recordings go to the store, and what an earlier run left too.
  recordingUploads: new RecordingUploads({
    store: recordingStoreFor(settings),
    dir: settings.recordingsDir,
    em: () => orm.em.fork() as EntityManager,
    live: (callId) => sessions.get(callId) !== undefined,
    logger,
  }),
  // The same runtime as the calls workers' (the same settings): the turns handed here are its.
  voiceRuntime: voiceRuntimeFromSettings(settings),
  logger,
};
// The model loads once, before the first call needs it.
await gateway.voiceActivity();
const server = createMediaGateway(gateway);
await new Promise<void>((resolve) => server.listen(settings.media.port, settings.host, resolve));
const control = createControlServer(gateway);
const { controlListen } = settings.media;
await new Promise<void>((resolve) => control.listen(controlListen.port, controlListen.host, resolve));
const worker = await createMediaSessionWorker(connection, gateway);
gateway.recordingUploads?.start();
watchPool('orm', ormPool(orm));
// Its calls' gauges, read when scraped (lib/metrics/gateway-metrics.ts).
watchGatewayCalls({
  streams: () => gateway.sessions.size,
  framesBehind: () => gateway.sessions.all().reduce((sum, session) => sum + session.framesWaiting, 0),
});
// Metrics and health for operators on a port of its own (METRICS_PORT), not the public MEDIA_PORT.
const metrics = await serveOperatorPort(settings, () => gatewayReadiness(gateway), logger);
logger.info('media gateway running', {
  streams: `ws://${reachableHost}:${settings.media.port}${MEDIA_STREAMS_PATH}`,
  control: settings.media.controlUrl,
  metrics: metrics && `${metrics.url}/metrics`,
  pid: process.pid,
});

let stopping = false;
function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info('media gateway stopping', { signal, calls: gateway.sessions.size });
  server.close();
  control.close();
  gateway.recordingUploads?.stop();
  try {
    worker.shutdown();
  } catch (error) {
    // Already shutting down (its run ended on its own): nothing more to stop.
    logger.warn('media session worker not running', { error: `${error}` });
  }
}
/**
 * SIGTERM drains (telephony spec section 5): no new streams (1013), /readyz 503, the live calls
 * finish; then it stops, or after MEDIA_DRAIN_SECONDS. SIGINT (Ctrl-C), or a second SIGTERM, stops
 * at once.
 */
async function drain() {
  if (gateway.drain.draining || stopping) return stop('SIGTERM');
  gateway.drain.begin();
  const { drainSeconds } = settings.media;
  logger.info('media gateway draining', { calls: gateway.sessions.live, drain_seconds: drainSeconds });
  const outcome = await gateway.drain.untilIdle(gateway.sessions, drainSeconds * 1000);
  logger.info('media gateway drained', { outcome, calls: gateway.sessions.live });
  stop('SIGTERM');
}
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => void drain());

try {
  await worker.run();
} finally {
  // Live calls end with the process; their recordings are closed whole.
  await Promise.all(gateway.sessions.all().map((session) => session.abandon()));
  await metrics?.close();
  await flushTracing();
  await temporal.connection.close();
  await connection.close();
  await orm.close(true);
  logger.info('media gateway stopped');
}
