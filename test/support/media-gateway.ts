import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Worker } from '@temporalio/worker';
import { SileroVoiceActivity } from '../../lib/audio/voice-activity.js';
import { createLogger, type Logger } from '../../lib/logger.js';
import type { LogLevel, MediaSettings } from '../../lib/settings.js';
import { endOfTurnFromSettings } from '../../lib/speech/end-of-turn.js';
import type { SpeechToText, TextToSpeech } from '../../lib/speech/speech-ports.js';
import { voiceRuntimeFromSettings } from '../../lib/voice-runtime/from-settings.js';
import { CallSessions } from '../../media/call-sessions.js';
import { createControlServer } from '../../media/control-server.js';
import type { GatewayContext } from '../../media/gateway-context.js';
import { GatewayDrain } from '../../media/gateway-drain.js';
import { createMediaGateway, MEDIA_STREAMS_PATH } from '../../media/media-gateway.js';
import { createMediaSessionWorker } from '../../media/media-session-worker.js';
import type { CallStack } from './call-stack.js';

// The media gateway of media/main.ts, in the test's process, on free ports (its public port and
// its control port) and the call stack's database, Temporal and settings (MEDIA_STREAMS_TOKEN and
// MEDIA_CONTROL_TOKEN among them: the stack's calls worker routes calls with audio to it).

export interface TestMediaGateway {
  /** ws://127.0.0.1:PORT/media/streams */
  streamsUrl: string;
  /** The public port's base URL (http://127.0.0.1:PORT): streams and health only. */
  publicUrl: string;
  /** The control port's URL, and the gateway's name on the calls it holds. */
  controlUrl: string;
  context: GatewayContext;
  close(): Promise<void>;
}

/**
 * Media settings for a call stack whose calls carry audio to a test gateway: the tokens (the
 * control token made from the streams one), and with ports chosen beforehand, MEDIA_GATEWAY_URL
 * and MEDIA_CONTROL_URL naming them (pass the same ports to startTestMediaGateway).
 */
export function testMediaSettings(
  base: MediaSettings,
  options: { streamsToken: string; port?: number; controlPort?: number },
): MediaSettings {
  return {
    ...base,
    streamsToken: options.streamsToken,
    controlToken: `${options.streamsToken}-control`,
    ...(options.port ? { gatewayUrl: `http://127.0.0.1:${options.port}` } : {}),
    ...(options.controlPort
      ? {
          controlUrl: `http://127.0.0.1:${options.controlPort}`,
          controlListen: { host: '127.0.0.1', port: options.controlPort },
        }
      : {}),
  };
}

export async function startTestMediaGateway(
  stack: CallStack,
  speech: { stt: SpeechToText; tts: TextToSpeech },
  // TEST_GATEWAY_LOG_LEVEL=info shows the gateway's turns when a test is being looked into.
  logger: Logger = createLogger((process.env.TEST_GATEWAY_LOG_LEVEL as LogLevel | undefined) ?? 'warn'),
  /** Ports chosen beforehand (the stack's MEDIA_GATEWAY_URL and MEDIA_CONTROL_URL name them); default free ones. */
  ports: { port?: number; controlPort?: number } = {},
): Promise<TestMediaGateway> {
  const { streamsToken, controlToken } = stack.settings.media;
  if (!streamsToken || !controlToken) {
    throw new Error('the call stack needs settings.media.streamsToken and controlToken (testMediaSettings)');
  }
  const sessions = new CallSessions();
  const context: GatewayContext = {
    settings: stack.settings,
    streamsToken,
    controlToken,
    controlUrl: '',
    orm: stack.db.orm,
    temporal: stack.client,
    ...speech,
    ...endOfTurnFromSettings(stack.settings),
    voiceActivity: () => SileroVoiceActivity.load(),
    sessions,
    drain: new GatewayDrain(),
    voiceRuntime: voiceRuntimeFromSettings(stack.settings),
    logger,
  };
  const server: Server = createMediaGateway(context);
  const control: Server = createControlServer(context);
  const listen = (on: Server, port: number) =>
    new Promise<number>((resolve) =>
      on.listen(port, '127.0.0.1', () => resolve((on.address() as AddressInfo).port)),
    );
  const [bound, controlBound] = await Promise.all([
    listen(server, ports.port ?? 0),
    listen(control, ports.controlPort ?? 0),
  ]);
  context.controlUrl = `http://127.0.0.1:${controlBound}`;
  const worker: Worker = await createMediaSessionWorker(stack.connection, context);
  const running = worker.run();
  return {
    streamsUrl: `ws://127.0.0.1:${bound}${MEDIA_STREAMS_PATH}`,
    publicUrl: `http://127.0.0.1:${bound}`,
    controlUrl: context.controlUrl,
    context,
    async close() {
      await Promise.all(sessions.all().map((session) => session.abandon()));
      server.close();
      control.close();
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}
