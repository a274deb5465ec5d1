import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';

// Histories of real runs, committed under test/fixtures/workflow-histories/ and replayed by
// test/workflow-histories.test.ts with the current workflow code, so a change that running
// workflows cannot follow (other commands, or in another order) fails `npm test`. A test keeps
// the history of a run it has just made under a name that says which workflow and path it is; with
// RECORD_HISTORIES=1 a name not yet committed is written (docs/development.md, "Changing a
// workflow").

export const KEPT_HISTORIES_DIR = fileURLToPath(new URL('../fixtures/workflow-histories', import.meta.url));

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
const HistoryProto = proto.temporal.api.history.v1.History;
/** Plain JSON for a history: 64-bit numbers as strings, enums by name, payload bytes in base64. */
const HISTORY_JSON = { longs: String, enums: String, bytes: String };

/** With RECORD_HISTORIES=1, writes `history` as `<name>.json` unless that file is committed already. */
export function keepHistory(name: string, history: History): void {
  const file = path.join(KEPT_HISTORIES_DIR, `${name}.json`);
  if (process.env.RECORD_HISTORIES !== '1' || existsSync(file)) return;
  writeFileSync(
    file,
    `${JSON.stringify(HistoryProto.toObject(HistoryProto.fromObject(history), HISTORY_JSON))}\n`,
  );
}

/** Every committed history, by file name. */
export function keptHistories(): {
  name: string;
  workflowId: string;
  history: proto.temporal.api.history.v1.History;
}[] {
  return readdirSync(KEPT_HISTORIES_DIR)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({
      name: file.slice(0, -'.json'.length),
      workflowId: `fixture:${file}`,
      history: HistoryProto.fromObject(JSON.parse(readFileSync(path.join(KEPT_HISTORIES_DIR, file), 'utf8'))),
    }));
}
