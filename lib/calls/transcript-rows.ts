import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { TranscriptEntry } from '../../db/entities/index.js';
import type { TranscriptLine } from './transcript.js';

// A call's transcript as rows, one per line, unique per (call, index).

export function transcriptLineOf(row: TranscriptEntry): TranscriptLine {
  return { index: row.index, role: row.role, text: row.text, offsetSeconds: row.offsetSeconds };
}

/** The call's lines in order; with `below`, only those before that index. */
export async function loadTranscript(
  em: EntityManager,
  callId: string,
  below?: number,
): Promise<TranscriptLine[]> {
  const rows = await em.find(
    TranscriptEntry,
    below === undefined ? { call: callId } : { call: callId, index: { $lt: below } },
    { orderBy: { index: 'asc' } },
  );
  return rows.map(transcriptLineOf);
}

/** Inserts lines; a line already written by an earlier attempt stays as it is. */
export async function recordLines(em: EntityManager, callId: string, lines: TranscriptLine[]): Promise<void> {
  if (lines.length === 0) return;
  const values = lines.map(() => '(?, ?, ?, ?, ?, ?, now())').join(', ');
  await em.getConnection().execute(
    `insert into transcript_entries (id, call_id, index, role, text, offset_seconds, created_at) values ${values} on conflict (call_id, index) do nothing`,
    lines.flatMap((line) => [
      randomUUID(),
      callId,
      line.index,
      line.role,
      line.text,
      Math.round(line.offsetSeconds),
    ]),
  );
}

/**
 * Barge-in: the agent's line `index` stopped part way, so it keeps only what was said of it. An
 * agent line that was not interrupted, or a line said in full, stays as it is; a repeat changes
 * nothing. A line none of which was heard (an answer dropped while the person spoke on:
 * media/held-answer.ts) is no line: the transcript is every line spoken, so it goes.
 */
export async function keepSpokenPart(
  em: EntityManager,
  input: { callId: string; index: number; spokenText: string },
): Promise<void> {
  const where = { call: input.callId, index: input.index, role: 'agent' as const };
  if (!input.spokenText.trim()) await em.nativeDelete(TranscriptEntry, where);
  else await em.nativeUpdate(TranscriptEntry, where, { text: input.spokenText });
}
