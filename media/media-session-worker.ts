import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { type NativeConnection, Worker } from '@temporalio/worker';
import { type MediaSessionActivities, mediaTaskQueue } from '../lib/media/media-session.js';
import { workerTracingOptions } from '../lib/tracing/tracing.js';
import type { GatewayContext } from './gateway-context.js';

// The gateway's Temporal worker: only the `holdMedia` activity of the calls it holds, on its own
// task queue (one per gateway), so the call workflow learns from missing heartbeats that the
// gateway holding its audio died (workflows/call/media-session.ts).

const HEARTBEAT_EVERY_MS = 2000;

export function createMediaSessionActivities(
  gateway: Pick<GatewayContext, 'sessions'>,
): MediaSessionActivities {
  return {
    async holdMedia({ callId }) {
      const session = await gateway.sessions.arriving(callId);
      if (!session) return; // its audio is already over
      const context = Context.current();
      let over = false;
      void session.ended.then(() => {
        over = true;
      });
      while (!over && !context.cancellationSignal.aborted) {
        context.heartbeat();
        await Promise.race([session.ended, sleep(HEARTBEAT_EVERY_MS)]);
      }
      // Not over: the gateway is stopping with the call live; the call workflow ends the call.
      if (!over) throw ApplicationFailure.nonRetryable('the media gateway stopped', 'MediaGatewayStopped');
      // The audio is released; what the workflow must still learn (the last words, the hang-up)
      // reaches it first, so the session's end never overtakes them.
      let told = false;
      void session.told().then(() => {
        told = true;
      });
      while (!told && !context.cancellationSignal.aborted) {
        context.heartbeat();
        await Promise.race([session.told(), sleep(HEARTBEAT_EVERY_MS)]);
      }
    },
  };
}

export function createMediaSessionWorker(
  connection: NativeConnection,
  gateway: GatewayContext,
): Promise<Worker> {
  return Worker.create({
    // Activity spans and the workflow spans' exporter when tracing is on (lib/tracing/tracing.ts).
    ...workerTracingOptions(),
    connection,
    namespace: gateway.settings.temporalNamespace,
    taskQueue: mediaTaskQueue(gateway.settings.taskQueuePrefix, gateway.controlUrl),
    activities: createMediaSessionActivities(gateway),
    maxConcurrentActivityTaskExecutions: 1000,
  });
}
