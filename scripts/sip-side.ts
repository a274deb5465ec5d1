import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Settings } from '../lib/settings.js';
import { formatDuration } from './processes.js';
import { cacheRoot, isExecutable, run, takeLock } from './temporal-binaries.js';

// The SIP side of CARRIER=sip (sip/, Go on sipgo/diago; docs/sip.md): built from this clone's
// sources with `go build` (modules from the Go module proxy, pinned by sip/go.sum) and cached by
// the hash of those sources ($VOICE_AGENT_CACHE_DIR/sip/sip-side-<hash>/), so a change of the
// sources builds again and an unchanged clone starts at once. SIP_SIDE_PATH names an existing
// binary instead. The first build takes about a minute on 2 cores (modules and compile).

type Log = (line: string) => void;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SIP_SOURCE_DIR = path.join(ROOT, 'sip');

/** The hash of the SIP side's sources (go.mod, go.sum and every non-test .go file). */
export function sipSourceHash(dir = SIP_SOURCE_DIR): string {
  const hash = createHash('sha256');
  const files = readdirSync(dir)
    .filter(
      (name) =>
        name === 'go.mod' || name === 'go.sum' || (name.endsWith('.go') && !name.endsWith('_test.go')),
    )
    .sort();
  for (const name of files)
    hash
      .update(name)
      .update('\0')
      .update(readFileSync(path.join(dir, name)))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** Why `npm start` refuses CARRIER=sip without speech: a SIP call's audio is the media gateway's. */
export const SIP_NEEDS_SPEECH =
  'CARRIER=sip needs speech (VOICE_SPEECH=local, or VOICE_STT_URL and VOICE_TTS_URL): SIP calls carry their audio through the media gateway';

let resolved: Promise<string> | undefined;

/** Path of a working SIP side binary, building it into the cache if needed (once per process). */
export function resolveSipSide(options: { log?: Log } = {}): Promise<string> {
  resolved ??= build(options.log ?? ((line) => process.stderr.write(`${line}\n`)));
  resolved.catch(() => {
    resolved = undefined;
  });
  return resolved;
}

async function build(log: Log): Promise<string> {
  const fromEnv = process.env.SIP_SIDE_PATH;
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`SIP_SIDE_PATH=${fromEnv} is not an executable file`);
    return path.resolve(fromEnv);
  }
  const parent = path.join(cacheRoot(), 'sip');
  const dir = path.join(parent, `sip-side-${sipSourceHash()}`);
  const binary = path.join(dir, 'sip-side');
  const cached = () => existsSync(path.join(dir, '.ready')) && isExecutable(binary);
  if (cached()) return binary;
  mkdirSync(parent, { recursive: true });
  const release = await takeLock(path.join(parent, '.provision.lock'), 'SIP side', log);
  try {
    if (cached()) return binary;
    const started = Date.now();
    log(`SIP side: building sip/ with go build into ${dir}; once per change of its sources`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const go = spawnSync('go', ['version'], { encoding: 'utf8' });
    if (go.status !== 0) throw new Error('go not found: install Go 1.21 or newer, or set SIP_SIDE_PATH');
    await run('go', ['build', '-trimpath', '-o', binary, '.'], {
      // sip/go.mod asks for Go 1.24: the machine's own Go builds it, no toolchain is fetched.
      env: { ...process.env, GOFLAGS: '-mod=readonly' },
      log,
      cwd: SIP_SOURCE_DIR,
      summarise: true,
    });
    if (!isExecutable(binary)) throw new Error(`${binary} was not produced`);
    writeFileSync(path.join(dir, '.ready'), `${new Date().toISOString()}\n`);
    log(`SIP side: ready after ${formatDuration(Date.now() - started)}: ${binary}`);
    return binary;
  } finally {
    release();
  }
}

/** `udp://HOST:PORT`, as `npm start` prints it: the public host, else the listen address. */
export function sipAddress(settings: Pick<Settings, 'media'>): string {
  const { listen, publicHost } = settings.media.sip;
  const host = publicHost === '0.0.0.0' || publicHost === '::' ? '127.0.0.1' : publicHost;
  return `udp://${host.includes(':') ? `[${host}]` : host}:${listen.port}`;
}
