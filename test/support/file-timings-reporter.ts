// A second reporter of `npm test` (scripts/test.ts), beside the spec reporter on the terminal: a
// JSON line into its destination (a file) as each test file is queued, as it reports its counts,
// as it ends (its wall-clock duration, why it did not pass) and when a stopped run interrupts it.
// Each line is written as it happens, because a run the guard stops ends this reporter with the
// process. scripts/test.ts reads them (scripts/test-timings.ts) to print where the time went, which
// files did not pass or never ran, and the closing count line.

export type TimingLine =
  | { kind: 'queued'; file: string }
  | {
      kind: 'counts';
      file: string;
      passed: number;
      failed: number;
      cancelled: number;
      skipped: number;
      todo: number;
    }
  /** durationMs: the file's process from start to exit; testsMs: its top-level tests and suites. */
  | { kind: 'ended'; file: string; durationMs: number; testsMs: number; error?: string }
  | { kind: 'interrupted'; file: string };

interface TestEvent {
  type: string;
  data: {
    name?: string;
    nesting?: number;
    file?: string;
    details?: { duration_ms?: number; error?: { message?: string; cause?: unknown } };
    counts?: { passed: number; failed: number; cancelled: number; skipped: number; todo: number };
    tests?: { name: string; nesting: number; file?: string }[];
  };
}

function errorText(error: { message?: string; cause?: unknown }): string {
  const cause = error.cause instanceof Error ? error.cause.message : error.cause;
  const text = typeof cause === 'string' && cause ? cause : (error.message ?? 'failed');
  return text.split('\n')[0].slice(0, 300);
}

/** A file's own test: nesting 0 and named after the file (node's runner names it so). */
function isFileTest(data: TestEvent['data']): data is TestEvent['data'] & { file: string } {
  return data.nesting === 0 && Boolean(data.file && data.name && data.file.endsWith(data.name));
}

export default async function* fileTimingsReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const line = (value: TimingLine) => `${JSON.stringify(value)}\n`;
  const testsMs = new Map<string, number>();
  for await (const { type, data } of source) {
    // test:complete comes as each test ends (test:pass and test:fail come in the report's order,
    // possibly after their file has ended).
    if (type === 'test:complete' && data.nesting === 0 && data.file && !isFileTest(data)) {
      testsMs.set(data.file, (testsMs.get(data.file) ?? 0) + (data.details?.duration_ms ?? 0));
    }
    if (type === 'test:enqueue' && isFileTest(data)) yield line({ kind: 'queued', file: data.file });
    else if (type === 'test:summary' && data.file && data.counts) {
      const { passed, failed, cancelled, skipped, todo } = data.counts;
      yield line({ kind: 'counts', file: data.file, passed, failed, cancelled, skipped, todo });
    } else if (type === 'test:complete' && isFileTest(data)) {
      const error = data.details?.error;
      yield line({
        kind: 'ended',
        file: data.file,
        durationMs: Math.round(data.details?.duration_ms ?? 0),
        testsMs: Math.round(testsMs.get(data.file) ?? 0),
        ...(error ? { error: errorText(error) } : {}),
      });
    } else if (type === 'test:interrupted') {
      for (const test of data.tests ?? [])
        if (test.file) yield line({ kind: 'interrupted', file: test.file });
    }
  }
}
