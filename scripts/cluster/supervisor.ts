import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { lowerPriority } from '../../lib/process-priority.js';
import { formatDuration, hasExited, stopChild } from '../processes.js';

// Keeps the parts of `npm run start:cluster` running, as a process supervisor (systemd, Kubernetes)
// does in production: a part that exits on its own is started again after a delay that doubles
// with each quick failure (1 s, 2 s, 4 s ... at most 30 s) and drops back to 1 s once it has run
// for a minute. A dead worker therefore never takes the API down, and the rest keeps running while
// one part is away. Only stop() ends a part for good.

export const RESTART_DELAY_MS = 1_000;
export const MAX_RESTART_DELAY_MS = 30_000;
/** A part that ran this long before exiting counts as healthy: its next restart is quick again. */
export const HEALTHY_AFTER_MS = 60_000;

/** The delay before the n-th consecutive restart (n = 1 for the first). */
export function restartDelay(consecutiveFailures: number): number {
  return Math.min(RESTART_DELAY_MS * 2 ** Math.max(0, consecutiveFailures - 1), MAX_RESTART_DELAY_MS);
}

/** One run of a part: how it ends and how to end it. */
export interface Running {
  pid: number | undefined;
  /** Settles with how it ended (`exit code 1`, `signal SIGKILL`). */
  exited: Promise<string>;
  /** Sends its stop signal and waits `graceMs` (its own unless given) before SIGKILL. */
  stop(graceMs?: number): Promise<void>;
}

export class Supervised {
  private current: Running | undefined;
  private stopping = false;
  /** A restart on request is under way: its exit is no failure. */
  private restarting = false;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  /** How many times it was (re)started, the first start included. */
  starts = 0;

  constructor(
    readonly name: string,
    private readonly launch: () => Promise<Running>,
    private readonly log: (line: string) => void,
  ) {}

  get pid(): number | undefined {
    return this.current?.pid;
  }

  /** Starts the first run; a failure to start it is thrown (later failures are retried). */
  async start(): Promise<void> {
    await this.run();
  }

  private async run(): Promise<void> {
    const running = await this.launch();
    this.starts++;
    this.current = running;
    if (this.starts > 1 && running.pid !== undefined)
      this.log(`${this.name}: started again, pid ${running.pid}`);
    const since = Date.now();
    if (this.stopping) {
      await running.stop();
      return;
    }
    void running.exited.then((how) => {
      if (this.stopping || this.restarting) return;
      this.failures = Date.now() - since >= HEALTHY_AFTER_MS ? 1 : this.failures + 1;
      const delay = restartDelay(this.failures);
      this.log(`${this.name} exited unexpectedly (${how}); starting it again in ${formatDuration(delay)}`);
      this.scheduleRestart(delay);
    });
  }

  private scheduleRestart(delay: number): void {
    this.timer = setTimeout(() => {
      if (this.stopping) return;
      this.run().catch((error: unknown) => {
        this.failures++;
        const next = restartDelay(this.failures);
        this.log(
          `${this.name} could not be started again (${errorText(error)}); next try in ${formatDuration(next)}`,
        );
        this.scheduleRestart(next);
      });
    }, delay);
  }

  /**
   * Stops the current run (its stop signal, then up to `graceMs` for it to finish: a media
   * gateway drains its calls) and starts the next at once, as a deploy does.
   */
  async restart(graceMs?: number): Promise<void> {
    if (this.stopping) return;
    this.restarting = true;
    clearTimeout(this.timer);
    try {
      await this.current?.stop(graceMs);
      if (!this.stopping) await this.run();
    } catch (error) {
      // Not started again: retried as a part that died is.
      this.failures++;
      this.log(
        `${this.name} could not be started again (${errorText(error)}); next try in ${formatDuration(restartDelay(this.failures))}`,
      );
      this.scheduleRestart(restartDelay(this.failures));
    } finally {
      this.restarting = false;
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.current?.stop();
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function exitOf(child: ChildProcess): Promise<string> {
  if (hasExited(child)) {
    return Promise.resolve(child.signalCode ? `signal ${child.signalCode}` : `exit code ${child.exitCode}`);
  }
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `exit code ${code}`)),
  );
}

/** Every child ever spawned, so that an abnormal end of the supervisor can still signal them. */
export const spawnedChildren = new Set<ChildProcess>();

/**
 * A child process in a process group of its own (the terminal's Ctrl-C reaches only the
 * supervisor, which then stops the parts in order), its output inherited or appended to a file.
 */
export function spawnPart(options: {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  logFile?: string;
  stopSignal: NodeJS.Signals;
  graceMs: number;
  /** Background work yields the CPU to the call path (a nice value; lib/process-priority.ts). */
  nice?: number;
}): Running {
  let stdio: ['ignore', 'inherit' | number, 'inherit' | number] = ['ignore', 'inherit', 'inherit'];
  let fd: number | undefined;
  if (options.logFile) {
    fd = openSync(options.logFile, 'a');
    stdio = ['ignore', fd, fd];
  }
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio,
    detached: true,
  });
  if (fd !== undefined) closeSync(fd);
  lowerPriority(child.pid, options.nice ?? 0);
  spawnedChildren.add(child);
  const exited = new Promise<string>((resolve) => {
    child.once('error', (error) => resolve(`could not be started: ${error.message}`));
    void exitOf(child).then(resolve);
  });
  void exited.then(() => spawnedChildren.delete(child));
  return {
    pid: child.pid,
    exited,
    stop: (graceMs) => stopChild(child, { signal: options.stopSignal, graceMs: graceMs ?? options.graceMs }),
  };
}
