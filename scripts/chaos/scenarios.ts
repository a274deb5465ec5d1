import { setTimeout as sleep } from 'node:timers/promises';
import type { WebhookReceiver } from './receiver.js';
import { type ChaosStack, secondsSince } from './stack.js';

// The faults, one per scenario. Each runs while calls are in flight (80% of the scenario's POSTs
// answered, the rest still being sent) and returns a line saying what it did and how long it took.

export interface FaultContext {
  stack: ChaosStack;
  receiver: WebhookReceiver;
  /** How long `receiver-down` keeps the receiver away. */
  receiverDownSeconds: number;
  log: (line: string) => void;
}

export interface ScenarioDefinition {
  name: string;
  /** One line for the table's legend and docs/reliability.md. */
  summary: string;
  /** Where the summary differs by target (the parts differ). */
  clusterSummary?: string;
  kind: 'calls' | 'resend';
  /** The targets it can run on (default both). */
  targets?: ('dev' | 'cluster')[];
  /** The webhook wait needs at least this long (a receiver that was down waits for the retry schedule). */
  minSettleSeconds?: number;
  fault?: (context: FaultContext) => Promise<string>;
}

function pgRestart(downSeconds: number) {
  return async ({ stack, log }: FaultContext) => {
    const start = Date.now();
    log(`stopping PostgreSQL (pg_ctl stop -m fast) for ${downSeconds} s`);
    await stack.postgres.stop();
    const stopped = Date.now();
    await sleep(downSeconds * 1000);
    await stack.postgres.startAgain();
    log('PostgreSQL is back');
    return `PostgreSQL stopped in ${((stopped - start) / 1000).toFixed(1)} s, down ${downSeconds} s, accepting again after ${secondsSince(start)} in all`;
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
    clusterSummary:
      '`kill -9` of one of the two `calls` worker processes mid-call; its supervisor starts it again',
    fault: async ({ stack, log }) => {
      log('kill -9 of a worker process');
      const what = await stack.killWorker();
      log('the worker process is back');
      return what;
    },
  },
  {
    name: 'temporal-restart',
    summary: 'the Temporal dev server (SQLite file) stopped with SIGINT and started again on the same file',
    kind: 'calls',
    clusterSummary:
      'the Temporal server (on PostgreSQL) stopped with SIGTERM and started again by its supervisor',
    fault: async ({ stack, log }) => {
      log('restarting the Temporal server');
      const what = await stack.restartTemporal();
      log('Temporal is back');
      return what;
    },
  },
  {
    name: 'pg-restart',
    summary: 'PostgreSQL restarted mid-call with `pg_ctl restart -m fast`',
    kind: 'calls',
    fault: async ({ stack, log }) => {
      const start = Date.now();
      log('restarting PostgreSQL (pg_ctl restart -m fast)');
      await stack.postgres.restart();
      log('PostgreSQL is back');
      return `PostgreSQL restarted with pg_ctl restart -m fast, accepting again after ${secondsSince(start)}`;
    },
  },
  {
    name: 'api-kill',
    summary:
      '`kill -9` of one of the two API processes while POST /calls are in flight; the other keeps the port, the clients retry with their keys, the supervisor starts it again',
    kind: 'calls',
    targets: ['cluster'],
    fault: async ({ stack, log }) => {
      log('kill -9 of an API process');
      const what = await stack.killApi!();
      log('the API process is back');
      return what;
    },
  },
  {
    name: 'receiver-down',
    summary: `the webhook receiver down (connections refused, 5 minutes unless --receiver-down-seconds says otherwise) mid-call, then back on the same URL; the events arrive by the deliveries' retry schedule`,
    kind: 'calls',
    // Attempts at 0 s, 30 s and 2.5 min fall in the outage; the fourth comes 10 min after the third.
    minSettleSeconds: 15 * 60,
    fault: async ({ receiver, receiverDownSeconds, log }) => {
      const start = Date.now();
      log(`the webhook receiver goes down for ${receiverDownSeconds} s`);
      await receiver.goDown();
      await sleep(receiverDownSeconds * 1000);
      await receiver.comeBack();
      log('the webhook receiver is back');
      return `webhook receiver refused connections for ${secondsSince(start)}, then listened again on the same port`;
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

/** The default list for `--target cluster`: every fault the cluster has, the receiver's outage last of the calls scenarios. */
export const DEFAULT_CLUSTER_SCENARIOS = [
  'worker-kill',
  'temporal-restart',
  'pg-restart',
  'pg-restart-30s',
  'api-kill',
  'burst',
  'receiver-down',
  'late-resend',
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
