import { readyzAnswers200 } from '../../lib/media/gateway-placement.js';

// A rolling restart of start:cluster's media gateways (telephony spec section 5): one at a time,
// each sent SIGTERM and given its drain (it refuses new streams, answers /readyz 503 so new calls
// go to the others, and exits once its calls are over), started again, and ready before the next
// one goes. No call is dropped: every call finishes on the gateway it began on.

export interface RestartablePart {
  name: string;
  /** Stops it (waiting up to `graceMs` for it to end on its own) and starts it again. */
  restart(graceMs: number): Promise<void>;
}

/** True once every part was restarted and ready again; false when one did not come back ready (the rest are left as they are). */
export async function restartOneAtATime(
  parts: readonly RestartablePart[],
  options: { graceMs: number; ready: (index: number) => Promise<boolean>; log: (line: string) => void },
): Promise<boolean> {
  for (const [index, part] of parts.entries()) {
    options.log(
      `${part.name}: draining, then started again (rolling restart ${index + 1} of ${parts.length})`,
    );
    await part.restart(options.graceMs);
    if (!(await options.ready(index))) {
      options.log(`${part.name} is not ready again: the rolling restart stops here`);
      return false;
    }
    options.log(`${part.name}: ready again`);
  }
  return true;
}

/** Until `url` answers 200 (a gateway's /readyz), at most `limitMs`. */
export async function untilReady(url: string, limitMs: number, everyMs = 250): Promise<boolean> {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    if (await readyzAnswers200(url, 1000)) return true;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return false;
}
