import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isExecutable, pipInstall, run, takeLock } from './temporal-binaries.js';

// Schemathesis (PyPI) against GET /v1/openapi.json: it generates requests from the document and
// checks that the server answers as the document says, and the reverse (`--checks all`, the
// stateful phase following the document's links). test/schemathesis.test.ts runs it on every
// `npm test` with a small budget; `npm run schemathesis [-- --max-examples N]` runs that test
// file alone with a bigger one.
//
// The tool lives in a virtualenv in the cache ($VOICE_AGENT_CACHE_DIR or ~/.cache/voice-agent-api,
// then schemathesis-<version>/), made once per machine and version with `python3 -m venv`.

export const SCHEMATHESIS_VERSION = '4.32.5';

/** Repository-level settings of the run (expected statuses of state-dependent refusals). */
export const SCHEMATHESIS_CONFIG = fileURLToPath(new URL('schemathesis.toml', import.meta.url));
/** Hooks of the run: a fresh Idempotency-Key per request. */
const SCHEMATHESIS_HOOKS = fileURLToPath(new URL('schemathesis-hooks.py', import.meta.url));

type Log = (line: string) => void;

function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.VOICE_AGENT_CACHE_DIR || path.join(os.homedir(), '.cache', 'voice-agent-api');
}

/** Whether this machine can make a Python virtualenv at all (python3 with venv and ensurepip). */
export function pythonVenvAvailable(): boolean {
  const probe = spawnSync('python3', ['-c', 'import venv, ensurepip'], { stdio: 'ignore' });
  return probe.status === 0;
}

/** The `st` executable, installed into the cached virtualenv on first use. */
export async function ensureSchemathesis(options: { log?: Log } = {}): Promise<string> {
  const log = options.log ?? (() => {});
  const dir = path.join(cacheRoot(), `schemathesis-${SCHEMATHESIS_VERSION}`);
  const st = path.join(dir, 'venv', 'bin', 'st');
  const ready = path.join(dir, '.ready');
  if (existsSync(ready) && isExecutable(st)) return st;
  mkdirSync(cacheRoot(), { recursive: true });
  const release = await takeLock(path.join(cacheRoot(), '.provision-schemathesis.lock'), 'schemathesis', log);
  try {
    if (existsSync(ready) && isExecutable(st)) return st;
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    log(`schemathesis ${SCHEMATHESIS_VERSION}: installing from PyPI into ${dir}`);
    const venv = path.join(dir, 'venv');
    await run('python3', ['-m', 'venv', venv], { log });
    await pipInstall(path.join(venv, 'bin', 'python'), [`schemathesis==${SCHEMATHESIS_VERSION}`], {
      log,
      summarise: true,
    });
    if (!isExecutable(st)) throw new Error(`${st} was not produced`);
    writeFileSync(ready, `schemathesis==${SCHEMATHESIS_VERSION}\n${new Date().toISOString()}\n`);
    return st;
  } finally {
    release();
  }
}

export interface SchemathesisRun {
  code: number | null;
  /** Everything `st` wrote, stdout and stderr interleaved. */
  output: string;
}

/**
 * `st run <openApiUrl> --checks all` with the given phases (all four by default), the key as a
 * bearer header, and at most `maxExamples` cases per operation and phase.
 */
export function runSchemathesis(options: {
  st: string;
  openApiUrl: string;
  apiKey: string;
  maxExamples: number;
  /** Comma-separated phases: examples, coverage, fuzzing, stateful. */
  phases: string;
  seed?: number;
  /** Where the JUnit report goes (kept for a look after a failing run). */
  reportDir: string;
  timeoutMs: number;
}): Promise<SchemathesisRun> {
  const args = [
    '--no-color',
    '--config-file',
    SCHEMATHESIS_CONFIG,
    'run',
    options.openApiUrl,
    '--checks',
    'all',
    // The spec answers a method a path does not have with 404 route_not_found, not 405.
    '--exclude-checks',
    'unsupported_method',
    '--phases',
    options.phases,
    '--max-examples',
    String(options.maxExamples),
    '--header',
    `Authorization: Bearer ${options.apiKey}`,
    '--workers',
    '1',
    '--report',
    'junit',
    '--report-dir',
    options.reportDir,
    '--output-truncate',
    'false',
    '--generation-database',
    'none',
    ...(options.seed === undefined ? [] : ['--seed', String(options.seed)]),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(options.st, args, {
      // st keeps a cache of crashes in .schemathesis/ of its working folder: keep it beside the report.
      cwd: options.reportDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        SCHEMATHESIS_HOOKS,
        SCHEMATHESIS_TELEMETRY: 'false',
        NO_COLOR: '1',
        COLUMNS: '120',
      },
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const timer = setTimeout(() => {
      output += `\n[schemathesis stopped after ${options.timeoutMs} ms]\n`;
      child.kill('SIGINT');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    }, options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

// `npm run schemathesis [-- --max-examples N] [--seed N] [--phases stateful]`: the test file alone, through scripts/test.ts
// (which starts PostgreSQL and Temporal), with the budget passed on in the environment.
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const argv = process.argv.slice(2);
  const flagValue = (flag: string) => {
    const index = argv.indexOf(flag);
    return index === -1 ? undefined : argv[index + 1];
  };
  const env = {
    ...process.env,
    SCHEMATHESIS_MAX_EXAMPLES: flagValue('--max-examples') ?? '50',
    ...(flagValue('--seed') ? { SCHEMATHESIS_SEED: flagValue('--seed') } : {}),
    ...(flagValue('--phases') ? { SCHEMATHESIS_PHASES: flagValue('--phases') } : {}),
    // A big budget outlasts npm test's usual 18 minutes.
    TEST_RUN_TIMEOUT_MS: process.env.TEST_RUN_TIMEOUT_MS || String(90 * 60_000),
  };
  const testScript = fileURLToPath(new URL('test.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', testScript, 'test/schemathesis.test.ts'], {
    stdio: 'inherit',
    env,
  });
  child.on('exit', (code) => process.exit(code ?? 1));
}
