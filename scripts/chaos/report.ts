import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChaosReport, ScenarioResult } from './run.js';

// The chaos run's table (markdown), its one-line JSON summary, and the results part of
// docs/reliability.md (between the two markers below).

/** The part of docs/reliability.md each target's results go in. */
export function docMarkers(target: 'dev' | 'cluster'): { start: string; end: string } {
  const name = target === 'cluster' ? 'chaos-cluster-results' : 'chaos-results';
  return { start: `<!-- ${name}:start -->`, end: `<!-- ${name}:end -->` };
}

function fiveHundreds(result: ScenarioResult): string {
  const entries = Object.entries(result.serverErrors);
  if (entries.length === 0) return 'none';
  return entries.map(([label, n]) => `${n}× ${label}`).join(', ');
}

function cell(value: number | null): string {
  return value === null ? '–' : String(value);
}

export function markdownTable(report: ChaosReport): string {
  const header = [
    'scenario',
    'calls posted',
    'in flight at fault',
    'final (completed / failed)',
    'stuck',
    'keys with >1 call',
    'lost',
    'events doubled',
    'transcript lines doubled',
    'webhook events missing',
    '5xx answers (by code)',
    '500 or 5xx without spec code',
    'result',
  ];
  const rows = report.results.map((r) => [
    `\`${r.name}\``,
    r.replayMismatches === null ? String(r.posted) : `${r.posted} re-sent`,
    cell(r.inFlightAtFault),
    r.replayMismatches === null
      ? `${r.final} (${r.completed} / ${r.failed})`
      : `${r.final} first answers replayed`,
    r.replayMismatches === null ? String(r.stuck) : '–',
    String(r.keysWithSeveralCalls),
    r.replayMismatches === null ? String(r.lost) : `${r.replayMismatches} answers ≠ first`,
    r.replayMismatches === null ? String(r.eventsDoubled) : '–',
    r.replayMismatches === null ? String(r.transcriptLinesDoubled) : '–',
    r.replayMismatches === null ? String(r.webhookEventsMissing) : '–',
    fiveHundreds(r),
    String(r.badServerErrors),
    r.ok ? 'pass' : '**FAIL**',
  ]);
  return [header, header.map(() => '---'), ...rows].map((row) => `| ${row.join(' | ')} |`).join('\n');
}

export function notesMarkdown(report: ChaosReport): string {
  return report.results
    .map((r) =>
      [`- \`${r.name}\` (${r.seconds} s): ${r.summary}.`, ...r.notes.map((n) => `  - ${n}`)].join('\n'),
    )
    .join('\n');
}

export function summaryJson(report: ChaosReport): string {
  return JSON.stringify({
    chaos: report.ok ? 'pass' : 'fail',
    target: report.target,
    seconds: report.seconds,
    calls: report.calls,
    sim_time_scale: report.simTimeScale,
    scenarios: report.results.map((r) => ({
      name: r.name,
      ok: r.ok,
      posted: r.posted,
      in_flight_at_fault: r.inFlightAtFault,
      final: r.final,
      stuck: r.stuck,
      keys_with_several_calls: r.keysWithSeveralCalls,
      lost: r.lost,
      events_doubled: r.eventsDoubled,
      transcript_lines_doubled: r.transcriptLinesDoubled,
      webhook_events_missing: r.webhookEventsMissing,
      server_errors: r.serverErrors,
      bad_server_errors: r.badServerErrors,
      unexpected_exits: r.unexpectedExits,
      replay_mismatches: r.replayMismatches,
    })),
  });
}

/** Replaces the results part of the page; the rest (method, scenarios, limits) is written by hand. */
export function writeDoc(file: string, report: ChaosReport, commandLine: string): void {
  const page = readFileSync(file, 'utf8');
  const { start: DOC_START, end: DOC_END } = docMarkers(report.target);
  const start = page.indexOf(DOC_START);
  const end = page.indexOf(DOC_END);
  if (start === -1 || end === -1 || end < start) {
    throw new Error(`${file} has no ${DOC_START} … ${DOC_END} part to replace`);
  }
  const block = [
    DOC_START,
    '',
    `Run of ${report.startedAt.slice(0, 16).replace('T', ' ')} UTC on ${commitOf(path.dirname(file))}, target \`${report.target}\`: \`${commandLine}\`, ${report.calls} calls per scenario, SIM_TIME_SCALE=${report.simTimeScale}, ${report.cores} cores, ${Math.round(report.seconds / 60)} minutes in all. Overall: **${report.ok ? 'every target met' : 'targets missed'}**.`,
    '',
    markdownTable(report),
    '',
    'What each run saw:',
    '',
    notesMarkdown(report),
    '',
    DOC_END,
  ].join('\n');
  writeFileSync(file, `${page.slice(0, start)}${block}${page.slice(end + DOC_END.length)}`);
}

/** The checkout's commit, with `+ changes` when its working tree differs from it. */
function commitOf(dir: string): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: dir,
      encoding: 'utf8',
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: dir,
      encoding: 'utf8',
    });
    return `commit ${commit}${dirty.trim() ? ' with uncommitted changes' : ''}`;
  } catch {
    return 'a checkout without git';
  }
}
