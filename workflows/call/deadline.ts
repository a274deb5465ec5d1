import { CancellationScope, sleep } from '@temporalio/workflow';

/**
 * A timeout on waits that repeat (the ring timeout over several callbacks, the silence timeout over
 * every turn) kept with one durable timer instead of one timer started and canceled per wait
 * (calls since patch `lean-call-1`). `restart()` starts a wait of `ms`; the timer already running
 * is kept, and when it fires early for the current wait, one more is started for what is left.
 * `expired` turns true once a wait has lasted `ms`. `stop()` cancels the timer (call it when done).
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
