import { DefaultLogger, type LogLevel, Runtime } from '@temporalio/worker';

// One quiet logger for the tests: Temporal's runtime (workers, connections) and its workflow
// bundler log warnings and errors only (or errors only), so test output shows what matters.

/** The levels a test may quiet Temporal's logs to. */
export type QuietLevel = Extract<LogLevel, 'WARN' | 'ERROR'>;

/** Temporal's logger at `level`, for Runtime.install() and bundleWorkflowCode(). */
export function quietLogger(level: QuietLevel = 'WARN'): DefaultLogger {
  return new DefaultLogger(level);
}

let installed = false;

/**
 * Installs Temporal's runtime with quietLogger(level). The runtime is one per process and must be
 * installed before the first connection or worker; later calls do nothing (the first level stays).
 */
export function installQuietRuntime(level: QuietLevel = 'WARN'): void {
  if (installed) return;
  Runtime.install({ logger: quietLogger(level) });
  installed = true;
}
