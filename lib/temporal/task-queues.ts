import type { Settings } from '../settings.js';

// The task queues, one per concern so each scales on its own. TASK_QUEUE_PREFIX keeps parallel
// test files (and several deployments on one Temporal namespace) apart.

export function taskQueues(settings: Pick<Settings, 'taskQueuePrefix'>) {
  return {
    calls: `${settings.taskQueuePrefix}calls`,
    simulator: `${settings.taskQueuePrefix}carrier-simulator`,
    webhooks: `${settings.taskQueuePrefix}webhooks`,
    /** The agents' tool requests, one activity per tool call, typed by the tool's name. */
    tools: `${settings.taskQueuePrefix}tools`,
  };
}
