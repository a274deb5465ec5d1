import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { S3RecordingStore } from '../lib/recordings/s3-recording-store.js';
import { loadSettings } from '../lib/settings.js';
import { formatDuration, freePort, hasExited, stopChild, waitForTcp } from './processes.js';
import { cacheRoot, isExecutable, run, takeLock } from './temporal-binaries.js';

// The S3-compatible store of RECORDINGS_STORE=s3 that the project runs itself (telephony spec
// section 4): the tests (scripts/test-shared-parts.ts) and `npm run start:cluster` with
// RECORDINGS_STORE=s3. It is Versity's S3 gateway (versitygw, Apache-2.0) over a folder (its
// `posix` backend: buckets are folders, objects files), built from the Go module proxy with
// `go install` and cached like Temporal's server ($VOICE_AGENT_CACHE_DIR/s3/versitygw-go-<version>/;
// about 3 minutes on 2 cores, once per machine). S3_SERVER_PATH names an existing binary instead.
// The access keys reach it through its environment, never its command line (which `ps` shows).

export const VERSITYGW_VERSION = 'v1.8.0';
const PACKAGE = 'github.com/versity/versitygw/cmd/versitygw';

type Log = (line: string) => void;

export interface S3Server {
  /** RECORDINGS_S3_* for the processes that use it (the keys included: give them only to those). */
  env: Record<string, string>;
  endpoint: string;
  bucket: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

export function s3ServerFolder(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheRoot(env), 's3', `versitygw-go-${VERSITYGW_VERSION}`);
}

let resolved: Promise<string> | undefined;

/** Path of a working versitygw, building it into the cache if needed (once per process). */
export function resolveS3Server(options: { log?: Log } = {}): Promise<string> {
  resolved ??= build(options.log ?? ((line) => process.stderr.write(`${line}\n`)));
  resolved.catch(() => {
    resolved = undefined;
  });
  return resolved;
}

async function build(log: Log): Promise<string> {
  const fromEnv = process.env.S3_SERVER_PATH;
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`S3_SERVER_PATH=${fromEnv} is not an executable file`);
    return path.resolve(fromEnv);
  }
  const dir = s3ServerFolder();
  const binary = path.join(dir, 'bin', 'versitygw');
  // .ready is written only after the binary answered, so an interrupted build is redone.
  const cached = () => existsSync(path.join(dir, '.ready')) && isExecutable(binary);
  if (cached()) return binary;
  mkdirSync(path.dirname(dir), { recursive: true });
  const release = await takeLock(path.join(path.dirname(dir), '.provision.lock'), 'S3 server', log);
  try {
    if (cached()) return binary;
    const go = spawnSync('go', ['version'], { encoding: 'utf8' });
    if (go.status !== 0) throw new Error('go not found: install Go 1.21 or newer, or set S3_SERVER_PATH');
    const started = Date.now();
    const source = `go install ${PACKAGE}@${VERSITYGW_VERSION}`;
    log(`S3 server: building with \`${source}\` into ${dir}; once per machine, about 3 minutes on 2 cores`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    await run('go', ['install', '-v', `${PACKAGE}@${VERSITYGW_VERSION}`], {
      env: { ...process.env, GOBIN: path.join(dir, 'bin') },
      log,
      summarise: true,
    });
    const check = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 });
    if (check.status !== 0) throw new Error(`${binary} --version failed: ${check.stderr || check.stdout}`);
    writeFileSync(path.join(dir, '.ready'), `${source}\n${new Date().toISOString()}\n`);
    log(`S3 server: ready after ${formatDuration(Date.now() - started)}: ${binary}`);
    return binary;
  } finally {
    release();
  }
}

/**
 * Starts versitygw on loopback over `dataDir` with fresh keys, and makes `bucket`. Its lines go to
 * `logFile` (quiet: no line per request).
 */
/** How to run the store: the same port, keys and folders for every (re)start of it. */
export interface S3ServerPlan {
  binary: string;
  args: string[];
  /** The server's own environment (its root keys). */
  serverEnv: Record<string, string>;
  port: number;
  endpoint: string;
  bucket: string;
  /** RECORDINGS_S3_* for the processes that use it (the keys included: give them only to those). */
  env: Record<string, string>;
}

/** Builds (if needed) and plans versitygw on loopback over `dataDir`, with fresh keys. */
export async function planS3Server(options: {
  dataDir: string;
  bucket?: string;
  port?: number;
  log?: Log;
}): Promise<S3ServerPlan> {
  const binary = await resolveS3Server({ log: options.log });
  const port = options.port ?? (await freePort());
  const bucket = options.bucket ?? 'recordings';
  const accessKeyId = `vgw${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  // Objects under buckets/, their metadata in a sidecar folder (no extended attributes needed).
  const [root, meta] = [path.join(options.dataDir, 'buckets'), path.join(options.dataDir, 'meta')];
  for (const folder of [root, meta]) mkdirSync(folder, { recursive: true });
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    binary,
    args: ['--port', `127.0.0.1:${port}`, '--quiet', 'posix', '--sidecar', meta, root],
    serverEnv: { ROOT_ACCESS_KEY_ID: accessKeyId, ROOT_SECRET_ACCESS_KEY: secretAccessKey },
    port,
    endpoint,
    bucket,
    env: {
      RECORDINGS_STORE: 's3',
      RECORDINGS_S3_ENDPOINT: endpoint,
      RECORDINGS_S3_BUCKET: bucket,
      RECORDINGS_S3_REGION: 'us-east-1',
      RECORDINGS_S3_ACCESS_KEY_ID: accessKeyId,
      RECORDINGS_S3_SECRET_ACCESS_KEY: secretAccessKey,
    },
  };
}

/** Once the planned store answers, its bucket is made if missing; throws when it does not answer. */
export async function untilS3Serves(plan: S3ServerPlan, child?: ChildProcess): Promise<void> {
  if (!(await waitForTcp('127.0.0.1', plan.port, { timeoutMs: 30_000, ...(child ? { child } : {}) }))) {
    throw new Error(`the S3 server did not start (${child && hasExited(child) ? 'it exited' : 'no answer'})`);
  }
  const store = new S3RecordingStore({
    endpoint: plan.endpoint,
    bucket: plan.bucket,
    region: 'us-east-1',
    accessKeyId: plan.env.RECORDINGS_S3_ACCESS_KEY_ID,
    secretAccessKey: plan.env.RECORDINGS_S3_SECRET_ACCESS_KEY,
  });
  try {
    await store.ensureBucket();
  } finally {
    store.close();
  }
}

/** Starts versitygw as planned (its lines to `logFile`, quiet: no line per request), bucket made. */
export async function startS3Server(options: {
  dataDir: string;
  logFile: string;
  bucket?: string;
  port?: number;
  log?: Log;
}): Promise<S3Server> {
  const plan = await planS3Server(options);
  const out = createWriteStream(options.logFile, { flags: 'a' });
  const child: ChildProcess = spawn(plan.binary, plan.args, {
    env: { ...process.env, ...plan.serverEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  const stop = async () => {
    await stopChild(child, { graceMs: 5_000 });
    out.end();
  };
  try {
    await untilS3Serves(plan, child);
  } catch (error) {
    await stop();
    throw new Error(`${error instanceof Error ? error.message : error}; see ${options.logFile}`);
  }
  return { env: plan.env, endpoint: plan.endpoint, bucket: plan.bucket, pid: child.pid, stop };
}

// `node --import tsx scripts/s3-server.ts` builds (if needed) and prints the binary's path;
// `… --ensure-bucket` makes RECORDINGS_S3_BUCKET in the store of RECORDINGS_S3_* when it is not
// there (docker-compose.yml's `s3-bucket`).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    if (process.argv.includes('--ensure-bucket')) {
      const settings = loadSettings();
      if (settings.recordingsStore.kind !== 's3')
        throw new Error('--ensure-bucket needs RECORDINGS_STORE=s3');
      const store = new S3RecordingStore(settings.recordingsStore);
      // The store may still be starting: a minute of tries.
      for (let attempt = 1; ; attempt++) {
        try {
          await store.ensureBucket();
          break;
        } catch (error) {
          if (attempt >= 30) throw error;
          await new Promise((resolve) => setTimeout(resolve, 2_000));
        }
      }
      store.close();
      console.log(`bucket ${settings.recordingsStore.bucket} is there`);
    } else {
      console.log(await resolveS3Server());
    }
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
