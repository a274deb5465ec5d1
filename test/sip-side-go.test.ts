import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { SIP_SOURCE_DIR } from '../scripts/sip-side.js';

// The SIP side's own unit tests (sip/*_test.go: the status mapping, numbers, settings, the jitter
// buffer), run with the machine's Go as `npm start` builds it.

const go = spawnSync('go', ['version'], { encoding: 'utf8' });

test('go test in sip/', { skip: go.status === 0 ? false : 'go is not installed', timeout: 300_000 }, () => {
  // -trimpath as scripts/sip-side.ts builds the binary: the packages compiled for it are reused.
  const run = spawnSync('go', ['test', '-count=1', '-trimpath', './...'], {
    cwd: SIP_SOURCE_DIR,
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=readonly' },
  });
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
});
