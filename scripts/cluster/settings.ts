// The settings of `npm run start:cluster` beyond the service's own (lib/settings.ts). The names
// API_PROCESSES and WORKER_PROCESSES are fixed by the operations contract, section 6; the others
// only move the cluster's ports so that it can run beside `npm start` or a test.

/** Worker names `workers/main.ts` takes: task queues, and the lists it expands. */
export const WORKER_NAMES = ['calls', 'webhooks', 'tools', 'carrier-simulator', 'service', 'all'] as const;
export type WorkerName = (typeof WORKER_NAMES)[number];

export const DEFAULT_WORKER_PROCESSES = 'calls=2,webhooks=2,carrier-simulator=1';

/**
 * History shards of a new cluster. Fixed when Temporal's database is created and never changeable
 * afterwards (every workflow id hashes onto a shard); see README "Production".
 */
export const DEFAULT_HISTORY_SHARDS = 4;

export interface WorkerGroup {
  /** What `workers/main.ts` is given: one task queue, or a list such as `service`. */
  worker: WorkerName;
  processes: number;
}

export interface ClusterSettings {
  apiProcesses: number;
  /**
   * MEDIA_GATEWAYS (default 1, at most 8): media gateways run with speech, the n-th (from 0) on
   * MEDIA_PORT + 10·n with its control API at the next port (mediaGatewayPorts); SIGUSR2 restarts
   * them one at a time, each draining its calls first.
   */
  mediaGateways: number;
  /** In start order; stopped in reverse (the carrier simulator last of the node processes). */
  workerGroups: WorkerGroup[];
  /** The Temporal frontend's gRPC port; the server's other ports are derived from it. */
  temporalPort: number;
  uiPort: number;
  /** The embedded PostgreSQL's port (unused when DATABASE_URL is set). */
  postgresPort: number;
  historyShards: number;
  /**
   * CLUSTER_TEMPORAL_TLS_CERT and CLUSTER_TEMPORAL_TLS_KEY: the certificate (PEM) the cluster's own
   * Temporal server presents, for TEMPORAL_TLS_SERVER_NAME and signed by TEMPORAL_TLS_CA (the
   * settings every process connects with). With a client certificate (TEMPORAL_TLS_CERT and
   * TEMPORAL_TLS_KEY) the server asks every client for one that CA signed: mutual TLS.
   */
  temporalServerTls: { certPath: string; keyPath: string } | undefined;
  /**
   * CLUSTER_BACKGROUND_NICE (default 10, 0–19; 0 turns it off): the priority the parts off a
   * talking call's path run at (the workers, the Temporal server and its Web UI, PostgreSQL, the
   * S3 store), below the media gateways, the SIP side and the API, so a call's audio and turns
   * get a core first when the machine is short of them
   * (docs/performance.md, "Turn latency at scale").
   */
  backgroundNice: number;
}

function integer(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new Error(`${name} must be a whole number of at least ${min}, got "${value}"`);
  }
  return n;
}

function port(name: string, value: string | undefined, fallback: number): number {
  const n = integer(name, value, fallback, 1);
  if (n > 65535) throw new Error(`${name} must be a port number, got "${value}"`);
  return n;
}

/**
 * `calls=2,webhooks=2,carrier-simulator=1`: how many `workers/main.ts <name>` processes to run for
 * each task queue (or named list). 0 runs none of that kind. The carrier simulator starts first
 * and stops last, as with `npm start`: it stands in for a carrier, which outlives our workers.
 */
export function parseWorkerProcesses(value: string | undefined): WorkerGroup[] {
  const text = value === undefined || value.trim() === '' ? DEFAULT_WORKER_PROCESSES : value;
  const groups: WorkerGroup[] = [];
  for (const entry of text.split(',')) {
    const trimmed = entry.trim();
    if (!trimmed) continue;
    const match = /^([a-z-]+)\s*=\s*(\d+)$/.exec(trimmed);
    if (!match) {
      throw new Error(`WORKER_PROCESSES: "${trimmed}" is not name=count (e.g. ${DEFAULT_WORKER_PROCESSES})`);
    }
    const worker = match[1] as WorkerName;
    if (!WORKER_NAMES.includes(worker)) {
      throw new Error(`WORKER_PROCESSES: unknown worker "${worker}"; known: ${WORKER_NAMES.join(', ')}`);
    }
    if (groups.some((group) => group.worker === worker)) {
      throw new Error(`WORKER_PROCESSES: "${worker}" is given twice`);
    }
    groups.push({ worker, processes: Number(match[2]) });
  }
  const running = groups.filter((group) => group.processes > 0);
  if (running.length === 0) throw new Error('WORKER_PROCESSES runs no worker process');
  const simulatorFirst = (group: WorkerGroup) => (group.worker === 'carrier-simulator' ? 0 : 1);
  return running.sort((a, b) => simulatorFirst(a) - simulatorFirst(b));
}

export function loadClusterSettings(env: NodeJS.ProcessEnv = process.env): ClusterSettings {
  const temporalPort = port('CLUSTER_TEMPORAL_PORT', env.CLUSTER_TEMPORAL_PORT, 7233);
  return {
    apiProcesses: integer('API_PROCESSES', env.API_PROCESSES, 2, 1),
    mediaGateways: mediaGatewayCount(env.MEDIA_GATEWAYS),
    workerGroups: parseWorkerProcesses(env.WORKER_PROCESSES),
    temporalPort,
    uiPort: port('CLUSTER_UI_PORT', env.CLUSTER_UI_PORT, temporalPort + 1000),
    postgresPort: port('CLUSTER_PG_PORT', env.CLUSTER_PG_PORT, 54330),
    historyShards: integer('TEMPORAL_HISTORY_SHARDS', env.TEMPORAL_HISTORY_SHARDS, DEFAULT_HISTORY_SHARDS, 1),
    temporalServerTls: temporalServerTls(env),
    backgroundNice: niceness(env.CLUSTER_BACKGROUND_NICE),
  };
}

const DEFAULT_BACKGROUND_NICE = 10;

function niceness(value: string | undefined): number {
  const nice = integer('CLUSTER_BACKGROUND_NICE', value, DEFAULT_BACKGROUND_NICE, 0);
  if (nice > 19) throw new Error(`CLUSTER_BACKGROUND_NICE must be a nice value from 0 to 19, got "${value}"`);
  return nice;
}

const MAX_MEDIA_GATEWAYS = 8;

function mediaGatewayCount(value: string | undefined): number {
  const count = integer('MEDIA_GATEWAYS', value, 1, 1);
  if (count > MAX_MEDIA_GATEWAYS)
    throw new Error(`MEDIA_GATEWAYS must be at most ${MAX_MEDIA_GATEWAYS}, got "${value}"`);
  return count;
}

/** The n-th gateway's ports (from 0): public MEDIA_PORT + 10·n, its control API the next one. */
export function mediaGatewayPorts(mediaPort: number, n: number): { port: number; controlPort: number } {
  const port = mediaPort + 10 * n;
  return { port, controlPort: port + 1 };
}

function temporalServerTls(env: NodeJS.ProcessEnv): ClusterSettings['temporalServerTls'] {
  const certPath = env.CLUSTER_TEMPORAL_TLS_CERT || undefined;
  const keyPath = env.CLUSTER_TEMPORAL_TLS_KEY || undefined;
  if (!certPath && !keyPath) return undefined;
  if (!certPath || !keyPath) {
    throw new Error(
      'CLUSTER_TEMPORAL_TLS_CERT and CLUSTER_TEMPORAL_TLS_KEY go together: set both or neither',
    );
  }
  if (!env.TEMPORAL_TLS_CA || !env.TEMPORAL_TLS_SERVER_NAME) {
    throw new Error(
      "CLUSTER_TEMPORAL_TLS_CERT needs TEMPORAL_TLS_CA (the CA that signed it) and TEMPORAL_TLS_SERVER_NAME (the name in it): the cluster's processes connect with them",
    );
  }
  return { certPath, keyPath };
}
