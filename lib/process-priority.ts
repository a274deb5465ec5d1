import os from 'node:os';

/**
 * Runs a child process just started at a lower priority: at least nice value `nice` (1–19; 0
 * leaves it as it is, and one already lower is left lower). Called right after spawn, before the
 * child forks its own workers (PostgreSQL's backends, which inherit it). A child that already
 * exited has nothing left to lower: that is not an error.
 */
export function lowerPriority(pid: number | undefined, nice: number): void {
  if (pid === undefined || nice <= 0) return;
  try {
    if (os.getPriority(pid) < nice) os.setPriority(pid, nice);
  } catch {
    // ESRCH: it exited at once; its own exit is reported by whoever waits for it.
  }
}
