import { after } from 'node:test';

// Loaded into every test file's process (`npm test`, scripts/test.ts). A file whose tests and hooks
// are done but which leaves a handle open (a server, a timer, a socket of a library) would keep the
// whole run waiting; this ends such a process a while after its tests finished. It replaces
// `--test-force-exit`, which in Node 24 ends a file's process as soon as the tests known so far are
// done: the rest of the file's tests were silently left out of the report (a run counted 702 tests
// where 713 ran before, with exit code 0), so a failing test there could not turn CI red.

/** Long enough for the slowest clean-up of a file (a cluster's processes stopping with their graces). */
const EXIT_AFTER_MS = Number(process.env.TEST_FILE_EXIT_AFTER_MS || 120_000);

after(() => {
  setTimeout(() => process.exit(), EXIT_AFTER_MS).unref();
});
