import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

// Small helpers shared by the scripts that run child processes (start, test, Temporal servers).

/** Ports below this are left to well-known and configured services. */
const FIRST_CHOSEN_PORT = 20_000;

/**
 * A port free right now on `host`, for a server started right after. It is taken below the
 * kernel's range for outgoing connections' local ports (Linux: ip_local_port_range), so that no
 * connection made meanwhile can take it: a port from that range (what listening on 0 gives) was
 * taken so between a check and a server's start while the test suite was busy. It is also
 * reserved (reservePort), so that no other process choosing a port here takes it before its
 * server listens: start:cluster's API listens tens of seconds after its port is chosen.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const below = outgoingPortsStart();
  for (let attempt = 0; attempt < 20 && below > FIRST_CHOSEN_PORT; attempt++) {
    const port = FIRST_CHOSEN_PORT + Math.floor(Math.random() * (below - FIRST_CHOSEN_PORT));
    // Reserved first: a port another process reserved is not listened on, not even for the check,
    // which could make its own server's listen fail at that moment.
    if (reservePort(port) && (await listenOn(host, port).catch(() => null)) !== null) return port;
  }
  return listenOn(host, 0);
}

/** Where chosen ports are reserved: a file per port, shared by every process with the same TMPDIR. */
export const PORT_RESERVATIONS_DIR = path.join(os.tmpdir(), 'voice-agent-api-ports');
/** How long a chosen port stays reserved: well past the slowest start of a server on it. */
export const PORT_RESERVED_MS = 5 * 60_000;

/**
 * Reserves `port` for this process's next server, across processes: false when another process
 * (or this one) chose it less than PORT_RESERVED_MS ago. Free while no server listens on it, a
 * port would otherwise pass another chooser's check too, and the later server find it taken (what
 * one suite failure fits: start:cluster's API port answered something other than HTTP). Where the
 * folder cannot be written, the port is taken on the listening check alone.
 */
export function reservePort(port: number): boolean {
  const file = path.join(PORT_RESERVATIONS_DIR, String(port));
  try {
    mkdirSync(PORT_RESERVATIONS_DIR, { recursive: true });
    writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return true;
  }
  try {
    if (Date.now() - statSync(file).mtimeMs < PORT_RESERVED_MS) return false;
    const now = new Date();
    utimesSync(file, now, now); // a reservation gone stale is taken over
    return true;
  } catch {
    return true;
  }
}

/** The first local port of outgoing connections (read once); 0 where unknown (not Linux). */
let outgoingStart: number | undefined;
function outgoingPortsStart(): number {
  if (outgoingStart === undefined) {
    try {
      const range = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8');
      outgoingStart = Number(range.trim().split(/\s+/)[0]) || 0;
    } catch {
      outgoingStart = 0; // the OS's own choice
    }
  }
  return outgoingStart;
}

/** Listens on host:port and closes again; the port it listened on. */
function listenOn(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: bound } = server.address() as net.AddressInfo;
      server.close(() => resolve(bound));
    });
  });
}

/** True when something accepts TCP connections on host:port. */
export async function acceptsTcp(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Polls until host:port accepts TCP, the child exits, or the time is up. Returns whether it accepts. */
export async function waitForTcp(
  host: string,
  port: number,
  options: { timeoutMs: number; child?: ChildProcess },
): Promise<boolean> {
  const deadline = Date.now() + options.timeoutMs;
  while (Date.now() < deadline) {
    if (options.child && hasExited(options.child)) return false;
    if (await acceptsTcp(host, port, 500)) return true;
    await sleep(100);
  }
  return false;
}

/** True when a process with this pid exists (EPERM: it does, under another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves true when the child exits within `timeoutMs` (or already has), false otherwise. */
export function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (hasExited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve(false);
    }, timeoutMs);
    const onExit = () => {
      clearTimeout(timer);
      resolve(true);
    };
    child.once('exit', onExit);
  });
}

/**
 * Asks a child to stop with `signal`, and kills it when it has not exited after `graceMs`.
 * Never throws: stopping is best effort during shutdown.
 */
export async function stopChild(
  child: ChildProcess,
  options: { signal?: NodeJS.Signals; graceMs?: number } = {},
): Promise<void> {
  if (hasExited(child)) return;
  try {
    child.kill(options.signal ?? 'SIGTERM');
  } catch {
    return;
  }
  if (await waitForExit(child, options.graceMs ?? 10_000)) return;
  try {
    child.kill('SIGKILL');
  } catch {
    return;
  }
  await waitForExit(child, 5_000);
}

/** A connection URL fit for a progress line: its password shown as ***. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

/** Human-readable duration for progress lines: 4.2s, 3m05s. */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}
