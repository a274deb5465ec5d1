import { CancellationScope, sleep } from '@temporalio/workflow';

/**
 * Makes a timeout that won its race part of the history before the call acts on it: a 1 ms timer,
 * so the workflow task that saw the timeout completes with nothing but that timer.
 *
 * Why: what a timeout leads to (releasing the far end, marking the call `failed` and writing
 * `call.failed`) is local activities, which run inside the workflow task. When that task fails
 * after they ran (an answer came meanwhile and the task also completed the workflow, which the
 * server refuses as UnhandledCommand; or the worker died), its retry sees the answer too, signals
 * first, and the call went on as answered after its `call.failed` was sent, ending 10 minutes
 * later on the silence timeout (found by `npm run chaos -- --target cluster`). Once the timeout is
 * in the history, every retry replays the same decision, and a late callback is only a callback
 * after the end.
 */
export async function settleExpiry(): Promise<void> {
  await sleep(1);
}

/**
 * A timeout on waits that repeat (the ring timeout over several callbacks, the silence timeout over
 * every turn) kept with one durable timer instead of one timer started and canceled per wait.
 * `restart()` starts a wait of `ms`; the timer already running is kept, and when it fires early
 * for the current wait, one more is started for what is left. `expired` turns true once a wait has
 * lasted `ms`. `stop()` cancels the timer (call it when done).
 */
export class Deadline {
  expired = false;
  private waitFrom = 0;
  private scope: CancellationScope | null = null;

  constructor(private readonly ms: number) {}

  restart(): void {
    this.waitFrom = Date.now();
    this.expired = false;
    if (this.scope === null) this.arm(this.ms);
  }

  stop(): void {
    this.scope?.cancel();
    this.scope = null;
  }

  private arm(ms: number): void {
    const scope = new CancellationScope();
    this.scope = scope;
    scope
      .run(() => sleep(ms))
      .then(
        () => {
          if (this.scope !== scope) return;
          this.scope = null;
          const left = this.waitFrom + this.ms - Date.now();
          if (left > 0) this.arm(left);
          else this.expired = true;
        },
        () => {
          // Canceled: the waits are over.
        },
      );
  }
}
