// Caps the requests in flight to one endpoint from this worker process, so a slow or dead
// receiver holds a bounded share of the worker while other endpoints keep being served.
// A caller that cannot get a slot in time gets null and gives its activity slot back.

export const MAX_IN_FLIGHT_PER_ENDPOINT = 20;
export const MAX_SLOT_WAIT_MS = 30_000;

type Waiter = { grant: () => void };

export class EndpointLimiter {
  private readonly inFlight = new Map<string, number>();
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(private readonly maxInFlight = MAX_IN_FLIGHT_PER_ENDPOINT) {}

  /** Resolves to a release function, or to null when no slot freed up within `maxWaitMs`. */
  acquire(endpointId: string, maxWaitMs = MAX_SLOT_WAIT_MS): Promise<(() => void) | null> {
    const current = this.inFlight.get(endpointId) ?? 0;
    if (current < this.maxInFlight) {
      this.inFlight.set(endpointId, current + 1);
      return Promise.resolve(this.releaser(endpointId));
    }
    return new Promise((resolve) => {
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve(this.releaser(endpointId));
        },
      };
      const timer = setTimeout(() => {
        const queue = this.waiting.get(endpointId) ?? [];
        queue.splice(queue.indexOf(waiter), 1);
        resolve(null);
      }, maxWaitMs);
      const queue = this.waiting.get(endpointId) ?? [];
      queue.push(waiter);
      this.waiting.set(endpointId, queue);
    });
  }

  private releaser(endpointId: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The slot passes straight to the next waiter; otherwise it is freed.
      const next = this.waiting.get(endpointId)?.shift();
      if (next) return next.grant();
      const left = (this.inFlight.get(endpointId) ?? 1) - 1;
      if (left > 0) this.inFlight.set(endpointId, left);
      else {
        this.inFlight.delete(endpointId);
        this.waiting.delete(endpointId);
      }
    };
  }
}
