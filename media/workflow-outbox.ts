import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import type { Logger } from '../lib/logger.js';
import { mediaOutboxBacklog, mediaOutboxRetries, stageQueueWait } from '../lib/metrics/gateway-metrics.js';
import { retryWithBackoff } from '../lib/retry-with-backoff.js';
import { SerialQueue } from '../lib/serial-queue.js';

// What one call's audio tells its call workflow (the person's lines, the turns the gateway took,
// the hang-up), as signals sent one after the other in the order they were given. A signal that
// fails because Temporal cannot be reached (a restart, a network blip) is sent again until it gets
// through, and the ones after it wait: the workflow sees the call's story in order. A workflow
// that is over (nothing more to tell) ends the retries; so does the budget (5 minutes): that
// signal is then dropped with an error in the log ("call workflow not told"), and the ones after
// it go on, so the story has a gap that the log names.

/** Retries back off from this to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 5_000;
/** Longest one signal is retried: a Temporal restart takes seconds, an outage of minutes ends the call anyway. */
const RETRY_BUDGET_MS = 5 * 60_000;

export class WorkflowOutbox {
  /** The signals, one after the other, in the order they were sent. */
  private readonly signals = new SerialQueue(stageQueueWait('workflow_outbox'));
  private workflowOver = false;

  constructor(
    private readonly deps: {
      temporal: Pick<Client, 'workflow'>;
      /** The call workflow's id; null until the call is taken (nothing is sent before). */
      workflowId: () => string | null;
      callId: string;
      logger: Logger;
      /** The waits between retries (tests shorten them). */
      sleep?: (ms: number) => Promise<void>;
    },
  ) {}

  /** Queues a signal after the ones before it; resolves once it went through (or was given up). */
  send<Args extends unknown[]>(signal: SignalDefinition<Args>, ...args: Args): Promise<void> {
    mediaOutboxBacklog.inc();
    return this.signals.push(() => this.deliver(signal, args)).finally(() => mediaOutboxBacklog.dec());
  }

  /** Every signal queued so far went through or was given up. */
  drained(): Promise<void> {
    return this.signals.idle();
  }

  private async deliver<Args extends unknown[]>(signal: SignalDefinition<Args>, args: Args): Promise<void> {
    const id = this.deps.workflowId();
    if (!id || this.workflowOver) return;
    const { callId, logger } = this.deps;
    try {
      await retryWithBackoff(() => this.deps.temporal.workflow.getHandle(id).signal(signal, ...args), {
        firstMs: FIRST_BACKOFF_MS,
        maxMs: MAX_BACKOFF_MS,
        budgetMs: RETRY_BUDGET_MS,
        // A call workflow that is over needs nothing more from this call.
        waitAfter: (error, backoffMs) => (error instanceof WorkflowNotFoundError ? null : backoffMs),
        onRetry: (error, attempt) => {
          mediaOutboxRetries.inc();
          logger.warn('call workflow not reached: retrying', {
            callId,
            signal: signal.name,
            attempt,
            error: `${error}`,
          });
        },
        ...(this.deps.sleep ? { sleep: this.deps.sleep } : {}),
      });
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) {
        this.workflowOver = true;
        logger.info('call workflow over: not told', { callId, signal: signal.name });
      } else {
        logger.error('call workflow not told', { callId, signal: signal.name, error: `${error}` });
      }
    }
  }
}
