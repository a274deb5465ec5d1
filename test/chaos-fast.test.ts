import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { DEFAULT_OPTIONS } from '../scripts/chaos/run.js';
import { type ChaosReport, runChaos } from '../scripts/chaos.js';
import { SERVER_BINARY_KINDS, serverBinaryFolder } from '../scripts/temporal-server-binaries.js';

// The fast fault cases of `npm run chaos` (docs/reliability.md), with a few calls each: kill -9 of
// a worker process mid-call, and a restart of the Temporal server. Each target runs the real parts
// as separate processes on ports and in a folder of its own, and the run judges them from the
// database, the webhook receiver's inbox and every answer the clients got.
//
// The cluster target (`npm run start:cluster`: a Temporal server on PostgreSQL, two API and two
// calls-worker processes) needs the Temporal server binaries, which the first `npm run
// start:cluster` builds (about 7 minutes, cached); where they are not built yet, that case says so
// and is skipped rather than making the suite build them, and the dev stack's case runs instead.

const FAST_SCENARIOS = ['worker-kill', 'temporal-restart'];
// Eight calls cover the callee mix's first cases: conversations, busy, never answered (its 30 s
// ring timeout is the longest wait of the run), transfer, declined, escalation.
const CALLS = 8;

const serverBuilt =
  SERVER_BINARY_KINDS.every((kind) => existsSync(path.join(serverBinaryFolder(kind), '.ready'))) ||
  Boolean(process.env.TEMPORAL_SERVER_PATH);

async function fastChaos(target: 'dev' | 'cluster'): Promise<ChaosReport> {
  const lines: string[] = [];
  const report = await runChaos({
    ...DEFAULT_OPTIONS,
    target,
    scenarios: FAST_SCENARIOS,
    calls: CALLS,
    deadlineSeconds: 240,
    settleSeconds: 120,
    log: (line) => lines.push(line),
  });
  for (const result of report.results) {
    assert.ok(
      result.ok,
      `${target} ${result.name} missed a target:\n${result.notes.join('\n')}\n--- run log:\n${lines.slice(-40).join('\n')}`,
    );
  }
  return report;
}

function assertNothingLostDoubledOrStuck(report: ChaosReport): void {
  assert.deepEqual(
    report.results.map((r) => r.name),
    FAST_SCENARIOS,
  );
  for (const r of report.results) {
    // Every call reached a final state, and the fault really came while calls were in flight.
    assert.equal(r.posted, CALLS, r.name);
    assert.equal(r.final, CALLS, r.name);
    assert.ok((r.inFlightAtFault ?? 0) > 0, `${r.name}: the fault came with no call in flight`);
    assert.equal(r.stuck, 0, r.name);
    assert.equal(r.lost, 0, r.name);
    assert.equal(r.keysWithSeveralCalls, 0, r.name);
    assert.equal(r.eventsDoubled, 0, r.name);
    assert.equal(r.transcriptLinesDoubled, 0, r.name);
    assert.equal(r.webhookEventsMissing, 0, r.name);
    assert.equal(r.badServerErrors, 0, r.name);
    assert.equal(r.unexpectedExits, 0, r.name);
  }
}

// The dev stack's faults are the cluster's minus its real server: where the cluster can run, it
// alone runs here (the suite's time is short), and the dev stack stands in where it cannot.
test('chaos, dev target: a worker kill -9 and a Temporal restart mid-call lose, double and strand nothing', {
  timeout: 600_000,
  skip: serverBuilt ? 'the cluster case covers these faults on this machine' : false,
}, async () => {
  assertNothingLostDoubledOrStuck(await fastChaos('dev'));
});

test('chaos, cluster target: a calls worker kill -9 and a Temporal server restart mid-call lose, double and strand nothing', {
  timeout: 600_000,
  skip: serverBuilt
    ? false
    : 'the Temporal server binaries are not built on this machine yet (npm run start:cluster builds and caches them once)',
}, async () => {
  const report = await fastChaos('cluster');
  assert.equal(report.target, 'cluster');
  assertNothingLostDoubledOrStuck(report);
});
