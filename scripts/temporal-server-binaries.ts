import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatDuration } from './processes.js';
import { isExecutable, run, takeLock, temporalCacheDir } from './temporal-binaries.js';

// The programs of `npm run start:cluster` (operations contract, section 6), built from the Go
// module proxy and cached like the CLI (scripts/temporal-binaries.ts):
//   server     go.temporal.io/server/cmd/server             the Temporal server (frontend, history,
//                                                           matching, worker services in one process)
//   sql-tool   go.temporal.io/server/cmd/tools/sql          temporal-sql-tool: creates and upgrades
//                                                           the PostgreSQL schemas (embedded in it)
//   ui-server  github.com/temporalio/ui-server/v2/cmd/server the Temporal Web UI (assets embedded)
// Each is resolved as: TEMPORAL_SERVER_PATH / TEMPORAL_SQL_TOOL_PATH / TEMPORAL_UI_SERVER_PATH
// (an existing binary), else the cache ($VOICE_AGENT_CACHE_DIR/temporal/<kind>-go-<version>/),
// else `go install` into the cache. Both modules' go.mod ask for Go 1.26.10: an older `go` is run
// with GOTOOLCHAIN=go1.26.10 (unless the environment sets GOTOOLCHAIN), which fetches exactly that
// toolchain through the Go module proxy (`auto` would pick the newest 1.26.x, a moving target). The
// first build of the server takes about 7-8 minutes on 2 cores.
// docker-compose.yml runs the images of the same versions; keep them in step.

export const TEMPORAL_SERVER_VERSION = 'v1.32.2';
export const TEMPORAL_UI_SERVER_VERSION = 'v2.56.0';

/** The Go the modules above ask for (their go.mod `go` line). */
export const GO_TOOLCHAIN = 'go1.26.10';

export type ServerBinaryKind = 'server' | 'sql-tool' | 'ui-server';

type Log = (line: string) => void;

interface Spec {
  title: string;
  envVar: string;
  /** What `go install` builds. */
  pkg: string;
  version: string;
  /** The name `go install` gives the binary (the last element of the package path). */
  built: string;
}

const SPECS: Record<ServerBinaryKind, Spec> = {
  server: {
    title: 'Temporal server',
    envVar: 'TEMPORAL_SERVER_PATH',
    pkg: 'go.temporal.io/server/cmd/server',
    version: TEMPORAL_SERVER_VERSION,
    built: 'server',
  },
  'sql-tool': {
    title: 'Temporal SQL tool',
    envVar: 'TEMPORAL_SQL_TOOL_PATH',
    pkg: 'go.temporal.io/server/cmd/tools/sql',
    version: TEMPORAL_SERVER_VERSION,
    built: 'sql',
  },
  'ui-server': {
    title: 'Temporal Web UI server',
    envVar: 'TEMPORAL_UI_SERVER_PATH',
    pkg: 'github.com/temporalio/ui-server/v2/cmd/server',
    version: TEMPORAL_UI_SERVER_VERSION,
    built: 'server',
  },
};

export const SERVER_BINARY_KINDS = Object.keys(SPECS) as ServerBinaryKind[];

/** The cache folder of one kind, versioned so that a version bump builds again. */
export function serverBinaryFolder(kind: ServerBinaryKind, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(temporalCacheDir(env), `${kind}-go-${SPECS[kind].version}`);
}

const resolved = new Map<ServerBinaryKind, Promise<string>>();

/** Path of a working binary of this kind, building it into the cache if needed. */
export function resolveServerBinary(kind: ServerBinaryKind, options: { log?: Log } = {}): Promise<string> {
  let found = resolved.get(kind);
  if (!found) {
    found = resolve(kind, options.log ?? ((line) => process.stderr.write(`${line}\n`)));
    resolved.set(kind, found);
    found.catch(() => resolved.delete(kind));
  }
  return found;
}

async function resolve(kind: ServerBinaryKind, log: Log): Promise<string> {
  const spec = SPECS[kind];
  const fromEnv = process.env[spec.envVar];
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`${spec.envVar}=${fromEnv} is not an executable file`);
    return path.resolve(fromEnv);
  }
  const dir = serverBinaryFolder(kind);
  const binary = path.join(dir, 'bin', spec.built);
  // .ready is written only after the binary answered, so an interrupted build is redone.
  const cached = () => existsSync(path.join(dir, '.ready')) && isExecutable(binary);
  if (cached()) return binary;

  mkdirSync(path.dirname(dir), { recursive: true });
  const release = await takeLock(path.join(path.dirname(dir), `.provision-${kind}.lock`), spec.title, log);
  try {
    if (cached()) return binary;
    const go = spawnSync('go', ['version'], { encoding: 'utf8' });
    if (go.status !== 0) {
      throw new Error(
        `Could not build the ${spec.title}: go not found (install Go 1.21 or newer; it fetches the 1.26.10 toolchain itself), or set ${spec.envVar} to an existing binary.`,
      );
    }
    const started = Date.now();
    const source = `go install ${spec.pkg}@${spec.version}`;
    log(
      `${spec.title}: building with \`${source}\` (${go.stdout.trim()}) into ${dir}; once per machine` +
        (kind === 'server' ? ', about 7 minutes on 2 cores' : ''),
    );
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    await run('go', ['install', '-v', `${spec.pkg}@${spec.version}`], {
      env: {
        ...process.env,
        GOBIN: path.join(dir, 'bin'),
        GOTOOLCHAIN: process.env.GOTOOLCHAIN || goToolchainFor(go.stdout),
      },
      log,
      // `-v` names every package it compiles: hundreds of lines, so only count them.
      summarise: true,
    });
    if (!isExecutable(binary)) throw new Error(`${binary} was not produced`);
    const check = spawnSync(binary, ['--help'], { encoding: 'utf8', timeout: 30_000 });
    if (check.status !== 0) throw new Error(`${binary} --help failed: ${check.stderr || check.stdout}`);
    writeFileSync(path.join(dir, '.ready'), `${source}\n${new Date().toISOString()}\n`);
    log(`${spec.title}: ready after ${formatDuration(Date.now() - started)}: ${binary}`);
    return binary;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${reason}\nOr set ${spec.envVar} to an existing ${spec.title} binary.`);
  } finally {
    release();
  }
}

/** `local` when the machine's go (`go version` output) is new enough, else the pinned toolchain. */
export function goToolchainFor(goVersionOutput: string): string {
  const version = (text: string) => {
    const match = /go(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
    return match ? [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)] : undefined;
  };
  const have = version(goVersionOutput);
  const want = version(GO_TOOLCHAIN) as number[];
  if (!have) return GO_TOOLCHAIN;
  for (let i = 0; i < 3; i++) {
    if (have[i] !== want[i]) return have[i] > want[i] ? 'local' : GO_TOOLCHAIN;
  }
  return 'local';
}

// `node --import tsx scripts/temporal-server-binaries.ts [server|sql-tool|ui-server]...` prints the
// resolved paths, building what is missing.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const kinds = (
    process.argv.slice(2).length ? process.argv.slice(2) : SERVER_BINARY_KINDS
  ) as ServerBinaryKind[];
  try {
    for (const kind of kinds) {
      if (!(kind in SPECS))
        throw new Error(`unknown binary "${kind}": use ${SERVER_BINARY_KINDS.join(', ')}`);
      console.log(`${kind}: ${await resolveServerBinary(kind)}`);
    }
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
