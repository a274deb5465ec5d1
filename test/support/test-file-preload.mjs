// Loaded into every test file's process by `npm test` (scripts/test.ts) in place of
// `--import tsx --import test/support/exit-when-done.ts`. Node hands a process's `--import`s to each
// worker thread it starts too, and each Temporal Worker runs its workflows in a thread of its own:
// there tsx and the exit watch cost about 0.4 s of CPU per Worker for nothing (the workflow bundle
// is plain JavaScript), and the suite creates hundreds of Workers. The main thread gets both.
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  await import('tsx');
  await import('./exit-when-done.ts');
}
