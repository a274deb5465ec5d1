import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Worker } from '@temporalio/worker';
import { SileroVoiceActivity } from '../../lib/audio/voice-activity.js';
import { createLogger, type Logger } from '../../lib/logger.js';
import type { LogLevel } from '../../lib/settings.js';
import type { SpeechToText, TextToSpeech } from '../../lib/speech/speech-ports.js';
import { voiceRuntimeFromSettings } from '../../lib/voice-runtime/from-settings.js';
import { CallSessions } from '../../media/call-sessions.js';
import type { GatewayContext } from '../../media/gateway-context.js';
import { createMediaGateway, MEDIA_STREAMS_PATH } from '../../media/media-gateway.js';
import { createMediaSessionWorker } from '../../media/media-session-worker.js';
import type { CallStack } from './call-stack.js';

// The media gateway of media/main.ts, in the test's process, on a free port and the call stack's
// database, Temporal and settings (MEDIA_STREAMS_TOKEN among them: the stack's calls worker routes
// calls with audio to it).

export interface TestMediaGateway {
  /** ws://127.0.0.1:PORT/media/streams */
  streamsUrl: string;
  controlUrl: string;
  context: GatewayContext;
  close(): Promise<void>;
}

export async function startTestMediaGateway(
  stack: CallStack,
  speech: { stt: SpeechToText; tts: TextToSpeech },
  // TEST_GATEWAY_LOG_LEVEL=info shows the gateway's turns when a test is being looked into.
  logger: Logger = createLogger((process.env.TEST_GATEWAY_LOG_LEVEL as LogLevel | undefined) ?? 'warn'),
  /** A port chosen beforehand (the stack's MEDIA_GATEWAY_URL names it); default a free one. */
  port = 0,
): Promise<TestMediaGateway> {
  const token = stack.settings.media.streamsToken;
  if (!token) throw new Error('the call stack needs settings.media.streamsToken');
  const sessions = new CallSessions();
  const context: GatewayContext = {
    settings: stack.settings,
    token,
    controlUrl: '',
    orm: stack.db.orm,
    temporal: stack.client,
    ...speech,
    voiceActivity: () => SileroVoiceActivity.load(),
    sessions,
    voiceRuntime: voiceRuntimeFromSettings(stack.settings),
    logger,
  };
  const server: Server = createMediaGateway(context);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  context.controlUrl = `http://127.0.0.1:${bound}`;
  const worker: Worker = await createMediaSessionWorker(stack.connection, context);
  const running = worker.run();
  return {
    streamsUrl: `ws://127.0.0.1:${bound}${MEDIA_STREAMS_PATH}`,
    controlUrl: context.controlUrl,
    context,
    async close() {
      await Promise.all(sessions.all().map((session) => session.abandon()));
      server.close();
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}
