// One stage's input queue (the media path, media/call-audio.ts, and the queues beside it): work
// runs one item after the other, in the order it was queued, each once the one before has settled,
// whatever that one did. Each item's own answer (or failure) goes back to whoever queued it; the
// queue itself never stops on a failure.

const settle = () => {};

export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();
  private pending = 0;

  /** `onWait`: told, as each item starts, how long it waited behind the ones before it (ms). */
  constructor(private readonly options: { onWait?: (ms: number) => void } = {}) {}

  /** Items queued and not yet settled. */
  get size(): number {
    return this.pending;
  }

  /** Queues `step` after everything queued so far; resolves or rejects as `step` does. */
  push<T>(step: () => T | PromiseLike<T>): Promise<T> {
    this.pending++;
    const { onWait } = this.options;
    const queuedAt = onWait ? performance.now() : 0;
    const started = onWait
      ? () => {
          onWait(performance.now() - queuedAt);
          return step();
        }
      : step;
    const run = this.tail.then(started).finally(() => {
      this.pending--;
    });
    this.tail = run.then(settle, settle);
    return run;
  }

  /** Settles once everything queued so far has (never rejects). */
  idle(): Promise<void> {
    return this.tail;
  }
}
