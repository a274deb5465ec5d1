import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, stopChild } from '../../scripts/processes.js';

// A real Prometheus (Debian's `prometheus` package, which .ci/run installs) scraping the given
// targets every second, with its HTTP API for PromQL queries: what an operator's Prometheus does.

export interface TestPrometheus {
  url: string;
  /** The instant vector of `promql`, as [labels, value] pairs. */
  query(promql: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  /** Waits until `promql` has a result for which `done` holds. */
  waitFor(
    promql: string,
    done: (result: { metric: Record<string, string>; value: number }[]) => boolean,
    timeoutMs?: number,
  ): Promise<{ metric: Record<string, string>; value: number }[]>;
  close(): Promise<void>;
}

/** `targets`: job name → `host:port` serving /metrics. */
export async function startPrometheus(targets: Record<string, string>): Promise<TestPrometheus> {
  const dir = await mkdtemp(path.join(tmpdir(), 'prometheus-'));
  const port = await freePort();
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  scrape_timeout: 1s',
    'scrape_configs:',
    ...Object.entries(targets).flatMap(([job, target]) => [
      `  - job_name: ${JSON.stringify(job)}`,
      '    static_configs:',
      `      - targets: [${JSON.stringify(target)}]`,
    ]),
  ].join('\n');
  await writeFile(path.join(dir, 'prometheus.yml'), config);
  const child: ChildProcess = spawn(
    'prometheus',
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const query: TestPrometheus['query'] = async (promql) => {
    const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await response.json()) as {
      status: string;
      error?: string;
      data: { result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    if (body.status !== 'success') throw new Error(`${promql}: ${body.error}`);
    return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  };
  const prometheus: TestPrometheus = {
    url,
    query,
    async waitFor(promql, done, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let last: Awaited<ReturnType<typeof query>> = [];
      while (Date.now() < deadline) {
        last = await query(promql).catch(() => []);
        if (done(last)) return last;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      throw new Error(
        `Prometheus never answered ${promql} as expected; last ${JSON.stringify(last)}; log: ${log}`,
      );
    },
    async close() {
      await stopChild(child, { signal: 'SIGTERM', graceMs: 5000 });
      await rm(dir, { recursive: true, force: true });
    },
  };
  // Ready when its API answers.
  for (const deadline = Date.now() + 30_000; ; ) {
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline || child.exitCode !== null) {
      await prometheus.close();
      throw new Error(`Prometheus did not start: ${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return prometheus;
}
