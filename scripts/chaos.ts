import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { abortMediaChaos, MEDIA_SCENARIOS, mediaReport, runMediaChaos } from './chaos/media-run.js';
import { markdownTable, notesMarkdown, summaryJson, writeDoc } from './chaos/report.js';
import { abortChaos, type ChaosOptions, type ChaosReport, DEFAULT_OPTIONS, runChaos } from './chaos/run.js';
import { DEFAULT_CLUSTER_SCENARIOS, DEFAULT_SCENARIOS, SCENARIOS } from './chaos/scenarios.js';
import { ROOT } from './chaos/stack.js';

// `npm run chaos [-- options]`: fault scenarios against the service's parts run as separate
// processes (issue 14's proof; docs/reliability.md). Prints a markdown table and, last, one JSON
// line; exits 1 when any scenario misses a target, 2 on a wrong command line or the time limit.

export { type ChaosOptions, type ChaosReport, runChaos };

const USAGE = `usage: npm run chaos -- [options]
  --target dev|cluster     the parts as npm start runs them (default), or npm run start:cluster
  --scenarios a,b          scenarios to run, in order (default ${DEFAULT_SCENARIOS.join(',')};
                           with --target cluster ${DEFAULT_CLUSTER_SCENARIOS.join(',')})
                           known: ${SCENARIOS.map((s) => s.name).join(', ')}
  --api-processes N        the cluster's API_PROCESSES (default ${DEFAULT_OPTIONS.apiProcesses})
  --worker-processes SPEC  the cluster's WORKER_PROCESSES (default ${DEFAULT_OPTIONS.workerProcesses})
  --agent scripted|llm     the scripted agent (default), or every agent on a language model (a local stand-in)
  --calls N                calls per scenario (default ${DEFAULT_OPTIONS.calls})
  --sim-time-scale X       SIM_TIME_SCALE of the run (default ${DEFAULT_OPTIONS.simTimeScale})
  --deadline-seconds S     a call not final this long after the fault and the last POST is stuck (default ${DEFAULT_OPTIONS.deadlineSeconds})
  --settle-seconds S       longest wait for webhook deliveries to settle (default ${DEFAULT_OPTIONS.settleSeconds})
  --resend-after-seconds S late-resend waits this long after a key's last try (default ${DEFAULT_OPTIONS.resendAfterSeconds})
  --receiver-down-seconds S how long receiver-down keeps the receiver away (default ${DEFAULT_OPTIONS.receiverDownSeconds})
  --max-minutes M          stop everything after this long, exit 2 (default 90)
  --write-doc              put the table into docs/reliability.md
  --keep-data              keep the run folder (logs, databases) instead of removing it
  --media                  the media faults instead, on start:cluster with talking calls
                           (${MEDIA_SCENARIOS.join(', ')}); takes --scenarios, --calls (default 20),
                           --sim-time-scale (default 0.5), --keep-data and --write-doc`;

function parseArgs(argv: string[]): {
  options: Omit<ChaosOptions, 'log'>;
  writeDoc: boolean;
  maxMinutes: number;
} {
  const options: Omit<ChaosOptions, 'log'> = { ...DEFAULT_OPTIONS, scenarios: [] };
  let write = false;
  let scenariosGiven = false;
  let maxMinutes = 90;
  const number = (name: string, value: string | undefined, min: number): number => {
    const n = Number(value);
    if (value === undefined || !Number.isFinite(n) || n < min)
      throw new Error(`${name} needs a number ≥ ${min}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.includes('=') ? arg.split('=', 2) : [arg, undefined];
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--target': {
        const target = value();
        if (target !== 'dev' && target !== 'cluster') throw new Error('--target is dev or cluster');
        options.target = target;
        break;
      }
      case '--api-processes':
        options.apiProcesses = Math.floor(number(flag, value(), 1));
        break;
      case '--worker-processes':
        options.workerProcesses = value() ?? '';
        break;
      case '--scenarios':
        scenariosGiven = true;
        options.scenarios = (value() ?? '').split(',').filter(Boolean);
        break;
      case '--agent': {
        const agent = value();
        if (agent !== 'scripted' && agent !== 'llm') throw new Error('--agent is scripted or llm');
        options.agent = agent;
        break;
      }
      case '--calls':
        options.calls = Math.floor(number(flag, value(), 1));
        break;
      case '--sim-time-scale':
        options.simTimeScale = number(flag, value(), 0.001);
        break;
      case '--deadline-seconds':
        options.deadlineSeconds = number(flag, value(), 1);
        break;
      case '--settle-seconds':
        options.settleSeconds = number(flag, value(), 0);
        break;
      case '--resend-after-seconds':
        options.resendAfterSeconds = number(flag, value(), 0);
        break;
      case '--receiver-down-seconds':
        options.receiverDownSeconds = number(flag, value(), 1);
        break;
      case '--max-minutes':
        maxMinutes = number(flag, value(), 1);
        break;
      case '--write-doc':
        write = true;
        break;
      case '--keep-data':
        options.keepData = true;
        break;
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown option ${arg}`);
    }
  }
  if (!scenariosGiven) {
    options.scenarios = [...(options.target === 'cluster' ? DEFAULT_CLUSTER_SCENARIOS : DEFAULT_SCENARIOS)];
  }
  const unknown = options.scenarios.filter((name) => !SCENARIOS.some((s) => s.name === name));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}`);
  if (options.scenarios.length === 0) throw new Error('--scenarios names none');
  const elsewhere = options.scenarios.filter((name) => {
    const targets = SCENARIOS.find((s) => s.name === name)?.targets;
    return targets !== undefined && !targets.includes(options.target);
  });
  if (elsewhere.length) throw new Error(`${elsewhere.join(', ')} runs only with --target cluster`);
  return { options, writeDoc: write, maxMinutes };
}

async function main(): Promise<number> {
  if (process.argv.includes('--media'))
    return mediaMain(process.argv.slice(2).filter((arg) => arg !== '--media'));
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const log = (line: string) =>
    process.stdout.write(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  let stopping = false;
  const stop = (code: number, why: string) => {
    if (stopping) return;
    stopping = true;
    log(`${why}; stopping every process and removing the run folder`);
    void abortChaos().finally(() => process.exit(code));
  };
  process.on('SIGINT', () => stop(130, 'SIGINT received'));
  process.on('SIGTERM', () => stop(143, 'SIGTERM received'));
  process.on('SIGHUP', () => stop(129, 'SIGHUP received'));
  const limit = setTimeout(
    () => stop(2, `time limit of ${parsed.maxMinutes} minutes reached`),
    parsed.maxMinutes * 60_000,
  );
  limit.unref();

  const report = await runChaos({ ...parsed.options, log });
  clearTimeout(limit);
  process.stdout.write(`\n${markdownTable(report)}\n\n${notesMarkdown(report)}\n\n`);
  if (parsed.writeDoc) {
    const doc = path.join(ROOT, 'docs', 'reliability.md');
    const args = process.argv.slice(2).filter((arg) => arg !== '--write-doc');
    writeDoc(doc, report, args.length ? `npm run chaos -- ${args.join(' ')}` : 'npm run chaos');
    log(`results written to ${doc}`);
  }
  process.stdout.write(`${summaryJson(report)}\n`);
  return report.ok ? 0 : 1;
}

/** `--media`: scripts/chaos/media-run.ts; the table goes to docs/reliability.md with --write-doc. */
async function mediaMain(argv: string[]): Promise<number> {
  const options = {
    calls: 20,
    scenarios: [...MEDIA_SCENARIOS] as (typeof MEDIA_SCENARIOS)[number][],
    simTimeScale: 0.5,
    keepData: false,
  };
  let writeMediaDoc = false;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].includes('=') ? argv[i].split('=', 2) : [argv[i], undefined];
    const value = () => inline ?? argv[++i] ?? '';
    if (flag === '--calls') options.calls = Math.max(1, Math.floor(Number(value())) || 20);
    else if (flag === '--sim-time-scale') options.simTimeScale = Number(value()) || 0.5;
    else if (flag === '--keep-data') options.keepData = true;
    else if (flag === '--write-doc') writeMediaDoc = true;
    else if (flag === '--scenarios') {
      const names = value().split(',').filter(Boolean);
      const unknown = names.filter((name) => !(MEDIA_SCENARIOS as readonly string[]).includes(name));
      if (unknown.length || names.length === 0) {
        process.stderr.write(
          `unknown media scenario ${unknown.join(', ')}; known: ${MEDIA_SCENARIOS.join(', ')}\n`,
        );
        return 2;
      }
      options.scenarios = names as typeof options.scenarios;
    } else {
      process.stderr.write(`unknown option ${flag} with --media\n${USAGE}\n`);
      return 2;
    }
  }
  const log = (line: string) =>
    process.stdout.write(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.on(signal, () => {
      log(`${signal} received; stopping every process and removing the run folder`);
      abortMediaChaos();
      process.exit(code);
    });
  }
  const startedAt = new Date();
  const results = await runMediaChaos({ ...options, log });
  const table = mediaReport(results);
  process.stdout.write(`\n${table}\n\n`);
  if (writeMediaDoc) {
    const doc = path.join(ROOT, 'docs', 'reliability.md');
    const command =
      `npm run chaos -- --media ${argv.filter((arg) => arg !== '--write-doc').join(' ')}`.trim();
    const heading = `Run of ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC: \`${command}\`, ${options.calls} talking calls per scenario, SIM_TIME_SCALE=${options.simTimeScale}, 2 cores. Overall: **${results.every((r) => r.pass) ? 'every target met' : 'a target missed'}**.`;
    const text = readFileSync(doc, 'utf8');
    const [start, end] = ['<!-- chaos-media-results:start -->', '<!-- chaos-media-results:end -->'];
    const from = text.indexOf(start);
    const to = text.indexOf(end);
    if (from === -1 || to === -1) throw new Error(`${doc} has no ${start} … ${end} markers`);
    writeFileSync(doc, `${text.slice(0, from + start.length)}\n${heading}\n\n${table}\n${text.slice(to)}`);
    log(`results written to ${doc}`);
  }
  process.stdout.write(
    `${JSON.stringify({ media: results.map(({ name, pass, measured }) => ({ name, pass, measured })) })}\n`,
  );
  return results.every((r) => r.pass) ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(
        `chaos failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      void abortChaos().finally(() => process.exit(1));
    },
  );
}
