import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClusterStack } from '../scripts/chaos/cluster-stack.js';

// BENCH_SERVER=cluster: a bench runs on `npm run start:cluster` (a Temporal server on PostgreSQL,
// API_PROCESSES API processes, WORKER_PROCESSES worker processes per task queue), started in a
// folder and on ports of its own by the same harness `npm run chaos -- --target cluster` uses.
// BENCH_WORKER_PROCESSES sets WORKER_PROCESSES (default: one process per queue). The reference
// workflow then runs on that same Temporal server, so the ratio compares like with like.

export type BenchServer = 'dev' | 'cluster';

export function benchServer(): BenchServer {
  const value = process.env.BENCH_SERVER || 'dev';
  if (value !== 'dev' && value !== 'cluster')
    throw new Error(`BENCH_SERVER is dev or cluster, not "${value}"`);
  return value;
}

export interface BenchCluster {
  databaseUrl: string;
  /** The API's origin, without `/v1`. */
  apiOrigin: string;
  temporalAddress: string;
  namespace: string;
  workerProcesses: string;
  close(): Promise<void>;
}

export async function startBenchCluster(options: {
  simTimeScale: number;
  /** More settings for the cluster's processes (e.g. VOICE_LLM_URL). */
  env?: NodeJS.ProcessEnv;
}): Promise<BenchCluster> {
  const workerProcesses = process.env.BENCH_WORKER_PROCESSES || 'calls=1,webhooks=1,carrier-simulator=1';
  const dir = mkdtempSync(path.join(os.tmpdir(), 'voice-agent-bench-cluster-'));
  const stack = new ClusterStack({
    dir,
    simTimeScale: options.simTimeScale,
    ...(options.env ? { env: options.env } : {}),
    apiProcesses: Number(process.env.BENCH_API_PROCESSES || 2),
    workerProcesses,
    // The services log at info into the run folder; the bench prints only the harness's lines.
    log: (line) => console.log(`[cluster] ${line}`),
  });
  await stack.start();
  console.log(`cluster: WORKER_PROCESSES=${workerProcesses}, Temporal server ${stack.temporalAddress}`);
  return {
    databaseUrl: stack.databaseUrl,
    apiOrigin: stack.apiUrl.replace(/\/v1$/, ''),
    temporalAddress: stack.temporalAddress,
    namespace: 'default',
    workerProcesses,
    close: async () => {
      await stack.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
