import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';

// The yardstick every bench that runs workflows measures itself against, on the same server in the
// same run: COUNT workflows of one activity each (bench/reference/reference-workflow.ts), started
// CONCURRENCY at a time, on a worker in the bench's process. Its rate is what this server and
// machine do at the least per workflow; a bench's own rate divided by it is the figure that
// compares across machines and loads (docs/performance.md).

export interface ReferenceResult {
  workflows: number;
  seconds: number;
  perSecond: number;
}

export async function runReference(options: {
  client: Client;
  address: string;
  namespace: string;
  count?: number;
  concurrency?: number;
}): Promise<ReferenceResult> {
  const count = options.count ?? Number(process.env.BENCH_REFERENCE_WORKFLOWS || 300);
  const concurrency = options.concurrency ?? 50;
  const taskQueue = `bench-reference-${randomBytes(3).toString('hex')}`;
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('./reference-workflow.ts', import.meta.url)),
    activities: { touch: async (n: number) => n },
  });
  try {
    return await worker.runUntil(async () => {
      // Warm up: the bundle is loaded and the connections are open before the clock starts.
      await options.client.workflow.execute('referenceWorkflow', {
        taskQueue,
        workflowId: `${taskQueue}-warm-up`,
        args: [0],
      });
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < count) {
            const n = ++next;
            await options.client.workflow.execute('referenceWorkflow', {
              taskQueue,
              workflowId: `${taskQueue}-${n}`,
              args: [n],
            });
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      return { workflows: count, seconds, perSecond: count / seconds };
    });
  } finally {
    await connection.close();
  }
}

/** The closing line of a bench: one JSON object, its rate against the reference's. */
export function closingLine(bench: string, perSecond: number, reference: ReferenceResult): string {
  return JSON.stringify({
    bench,
    server: process.env.BENCH_SERVER || 'dev',
    per_second: round(perSecond),
    reference_per_second: round(reference.perSecond),
    ratio: round(perSecond / reference.perSecond, 3),
  });
}

function round(value: number, digits = 2): number {
  return Number(value.toFixed(digits));
}
