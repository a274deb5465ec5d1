import { appendFileSync } from 'node:fs';
import { after } from 'node:test';
import { cpuMsWithReapedChildren } from '../../scripts/cpu-time.js';

// Loaded into every test file's process (`npm test`, scripts/test.ts). A file whose tests and hooks
// are done but which leaves a handle open (a server, a timer, a socket of a library) would keep the
// whole run waiting; this ends such a process a while after its tests finished. It replaces
// `--test-force-exit`, which in Node 24 ends a file's process as soon as the tests known so far are
// done: the rest of the file's tests were silently left out of the report (a run counted 702 tests
// where 713 ran before, with exit code 0), so a failing test there could not turn CI red.
// On exit it also notes the CPU time the file cost (TEST_CPU_LOG): on a 2-core machine the suite's
// length is mostly the CPU its files need, which their wall-clock time hides.

/** Long enough for the slowest clean-up of a file (a cluster's processes stopping with their graces). */
const EXIT_AFTER_MS = Number(process.env.TEST_FILE_EXIT_AFTER_MS || 120_000);

after(() => {
  setTimeout(() => process.exit(), EXIT_AFTER_MS).unref();
});

const cpuLog = process.env.TEST_CPU_LOG;
const file = process.argv.find((arg) => /\.test\.[cm]?[jt]s$/.test(arg));
if (cpuLog && file) {
  process.once('exit', () => {
    try {
      appendFileSync(cpuLog, `${JSON.stringify({ file, cpuMs: Math.round(cpuMsWithReapedChildren()) })}\n`);
    } catch {
      // A report line lost is no reason to fail the file.
    }
  });
}
