import { setTimeout as sleep } from 'node:timers/promises';
import type { Stack } from './stack.js';

// The faults, one per scenario. Each runs while calls are in flight (80% of the scenario's POSTs
// answered, the rest still being sent) and returns a line saying what it did and how long it took.

export interface ScenarioDefinition {
  name: string;
  /** One line for the table's legend and docs/reliability.md. */
  summary: string;
  kind: 'calls' | 'resend';
  fault?: (stack: Stack, log: (line: string) => void) => Promise<string>;
}

/** Seconds since `start`, one decimal. */
function since(start: number): string {
  return `${((Date.now() - start) / 1000).toFixed(1)} s`;
}

function pgRestart(downSeconds: number) {
  return async (stack: Stack, log: (line: string) => void) => {
    const start = Date.now();
    log(`stopping PostgreSQL (pg_ctl stop -m fast) for ${downSeconds} s`);
    await stack.stopPostgres();
    const stopped = Date.now();
    await sleep(downSeconds * 1000);
    await stack.startPostgres();
    log('PostgreSQL is back');
    return `PostgreSQL stopped in ${((stopped - start) / 1000).toFixed(1)} s, down ${downSeconds} s, accepting again after ${since(start)} in all`;
  };
}

export const SCENARIOS: ScenarioDefinition[] = [
  {
    name: 'baseline',
    summary: 'no fault: the control run (not in the default list)',
    kind: 'calls',
    fault: async () => 'no fault',
  },
  {
    name: 'worker-kill',
    summary:
      '`kill -9` of the service worker process (`workers/main.ts service`) mid-call; started again 1 s later',
    kind: 'calls',
    fault: async (stack, log) => {
      const start = Date.now();
      log('kill -9 of the workers process');
      const { pid } = await stack.killWorkers();
      log('workers are back');
      return `workers pid ${pid} killed with SIGKILL; the new process ran its workers after ${since(start)}`;
    },
  },
  {
    name: 'temporal-restart',
    summary: 'the Temporal dev server (SQLite file) stopped with SIGINT and started again on the same file',
    kind: 'calls',
    fault: async (stack, log) => {
      const start = Date.now();
      log('restarting the Temporal dev server');
      await stack.restartTemporal();
      log('Temporal is back');
      return `Temporal dev server stopped and serving again after ${since(start)}`;
    },
  },
  {
    name: 'pg-restart-10s',
    summary: 'PostgreSQL stopped (`pg_ctl stop -m fast`) mid-call, down 10 s, started again',
    kind: 'calls',
    fault: pgRestart(10),
  },
  {
    name: 'pg-restart-30s',
    summary: 'PostgreSQL stopped (`pg_ctl stop -m fast`) mid-call, down 30 s, started again',
    kind: 'calls',
    fault: pgRestart(30),
  },
  {
    name: 'burst',
    summary:
      '40 concurrent POST /calls (on top of the calls in flight); PostgreSQL stopped 300 ms into the burst, down 5 s',
    kind: 'calls',
  },
  {
    name: 'late-resend',
    summary:
      'every key of the scenarios before it sent again, once, more than 60 s (the idempotency lock) after its last try: each must get its first answer back (`Idempotent-Replayed: true`, same call id) and no key may get a second call',
    kind: 'resend',
  },
];

export const DEFAULT_SCENARIOS = [
  'worker-kill',
  'temporal-restart',
  'pg-restart-10s',
  'pg-restart-30s',
  'burst',
  'late-resend',
];

/** The burst: how many POSTs at once, when PostgreSQL stops, for how long. */
export const BURST = { posts: 40, stopAfterMs: 300, downMs: 5_000 };

export interface CalleeCase {
  /** Last four digits of `to`: the simulator's scenario (workflows/callee-scripts.ts). */
  suffix: string;
  label: string;
  status: 'completed' | 'failed';
  endReason: string;
}

/** The mix of callees, cycled through by call index: 4 of 11 plain conversations, one of each other case. */
export const CALLEE_MIX: CalleeCase[] = [
  { suffix: '5000', label: 'conversation', status: 'completed', endReason: 'agent_hangup' },
  { suffix: '1001', label: 'busy', status: 'failed', endReason: 'busy' },
  { suffix: '5001', label: 'conversation', status: 'completed', endReason: 'agent_hangup' },
  { suffix: '1002', label: 'no answer', status: 'failed', endReason: 'no_answer' },
  { suffix: '2002', label: 'transfer', status: 'completed', endReason: 'transferred' },
  { suffix: '5002', label: 'conversation', status: 'completed', endReason: 'agent_hangup' },
  { suffix: '1003', label: 'declined', status: 'failed', endReason: 'no_answer' },
  { suffix: '2003', label: 'escalation', status: 'completed', endReason: 'caller_hangup' },
  { suffix: '5003', label: 'conversation', status: 'completed', endReason: 'agent_hangup' },
  { suffix: '1004', label: 'refused', status: 'failed', endReason: 'not_connected' },
  { suffix: '2004', label: 'hang-up', status: 'completed', endReason: 'caller_hangup' },
];

export function calleeCaseOf(to: string | null): CalleeCase | undefined {
  return CALLEE_MIX.find((c) => to?.endsWith(c.suffix));
}
