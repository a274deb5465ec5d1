import type { Carrier } from '../carrier/carrier.js';
import type { Logger } from '../logger.js';

/**
 * Passes an agent line's sentences to a carrier with audio as the voice runtime makes them
 * (`Carrier.saySentence`), one after the other and without holding up the runtime's stream.
 * A sentence that does not get through is only logged: the whole line follows with `say`, which
 * plays every sentence not yet played.
 */
export class SentenceRelay {
  private chain: Promise<void> = Promise.resolve();
  private seq = 0;

  constructor(
    private readonly deps: { carrier: Pick<Carrier, 'saySentence'> },
    private readonly callId: string,
    private readonly index: number,
    private readonly logger?: Logger,
  ) {}

  relay(text: string): void {
    const { carrier } = this.deps;
    if (!carrier.saySentence) return;
    const request = { callId: this.callId, index: this.index, seq: this.seq++, text };
    this.chain = this.chain
      .then(() => carrier.saySentence!(request))
      .catch((error: unknown) => {
        this.logger?.warn('sentence not relayed', {
          callId: this.callId,
          index: this.index,
          error: `${error}`,
        });
      });
  }

  /** Every sentence relayed so far has been handed over (or given up). */
  settled(): Promise<void> {
    return this.chain;
  }
}
