import { Context } from '@temporalio/activity';

/** How often a running activity reports that it is alive; well inside every heartbeat timeout. */
export const HEARTBEAT_EVERY_MS = 1_000;

/**
 * Wraps each activity so that it heartbeats while it runs. With a heartbeat timeout on every
 * step, a worker that dies mid-step is noticed in seconds, not at the end of the step's
 * start-to-close timeout; a step that finishes quickly sends no heartbeat at all. Local
 * activities (the call's database writes) run as they are.
 */
export function heartbeating<T extends Record<string, (...args: never[]) => Promise<unknown>>>(
  activities: T,
): T {
  const wrapped = Object.entries(activities).map(([name, activity]) => [
    name,
    async (...args: never[]) => {
      const context = Context.current();
      // A local activity cannot heartbeat: its workflow task is kept alive by the worker instead.
      if (context.info.isLocal) return activity(...args);
      const timer = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
      try {
        return await activity(...args);
      } finally {
        clearInterval(timer);
      }
    },
  ]);
  return Object.fromEntries(wrapped) as T;
}
