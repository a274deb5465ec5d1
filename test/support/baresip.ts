import { type ChildProcess, spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { freePort, stopChild, waitForTcp } from '../../scripts/processes.js';

// Debian's baresip as the far end of SIP calls over loopback (docs/sip.md):
// an account that auto-answers (or rings until told), `aufile` playing a WAV as the person's
// voice, `sndfile` recording both directions as WAV files in `dir`, and ctrl_tcp to dial, answer
// and hang up and to read its call events. `available()` is false where baresip is not installed
// (the tests then skip and say so; .ci/run installs it).

export interface BaresipEvent {
  type: string;
  param?: string;
  peeruri?: string;
  [key: string]: unknown;
}

export interface Baresip {
  /** Where it listens for SIP: 127.0.0.1:PORT. */
  port: number;
  /** Folder of its config and recordings (`dump-*-enc.wav` what it sent, `-dec.wav` what it heard). */
  dir: string;
  events: BaresipEvent[];
  /** Runs a ctrl_tcp command (`dial`, `hangup`, `accept`); resolves with its response. */
  command(command: string, params?: string): Promise<{ ok: boolean; data: string }>;
  /** The first event of this type (already seen, or within `limitMs`). */
  waitForEvent(type: string, limitMs?: number): Promise<BaresipEvent>;
  stop(): Promise<void>;
  /** Gone at once, without a BYE: its RTP just stops, as with a lost network. */
  kill(): Promise<void>;
}

/** Whether `program` is on PATH (baresip, sipp, go: the SIP tests skip without them). */
export function onPath(program: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      return statSync(path.join(dir, program)).isFile();
    } catch {
      return false;
    }
  });
}

type BaresipOptions = Parameters<typeof startOnce>[0];

/** baresip binds SIP on UDP and TCP and TLS on the next port: a port taken there is tried again elsewhere. */
export async function startBaresip(options: BaresipOptions): Promise<Baresip> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt >= 3 || !String(error).includes('Address already in use')) throw error;
    }
  }
}

async function startOnce(options: {
  dir: string;
  /** The person's voice: 8 kHz mono 16-bit WAV (baresip hangs up when it ends: pad it). */
  play: string;
  /** `auto`: picks up at once; `manual`: rings until `accept` or `hangup`. */
  answer: 'auto' | 'manual';
  /** Its account's user: the number dialled reaches it (baresip matches the request-URI user). */
  user?: string;
  /** The codecs it offers and takes, default `PCMU,PCMA`. */
  codecs?: string;
  /** false: it refuses REFER (a phone or trunk that does not take transfers). */
  callTransfer?: boolean;
}): Promise<Baresip> {
  const { dir } = options;
  await mkdir(dir, { recursive: true });
  const [port, controlPort] = [await freePort(), await freePort()];
  const rtp = 30_000 + Math.floor(Math.random() * 200) * 10;
  await writeFile(
    path.join(dir, 'config'),
    [
      'poll_method epoll',
      // Its SDP then offers 127.0.0.1, not the machine's other address: all media stays on loopback.
      'net_interface 127.0.0.1',
      `sip_listen 127.0.0.1:${port}`,
      `audio_source aufile,${options.play}`,
      'audio_player aubridge,far-end',
      'audio_alert aubridge,far-end',
      `rtp_ports ${rtp}-${rtp + 9}`,
      'module_path /usr/lib/baresip/modules',
      'module g711.so',
      'module aufile.so',
      'module aubridge.so',
      'module sndfile.so',
      'module_app account.so',
      'module_app menu.so',
      'module_app ctrl_tcp.so',
      `ctrl_tcp_listen 127.0.0.1:${controlPort}`,
      `snd_path ${dir}`,
      '',
    ].join('\n'),
  );
  const answermode = options.answer === 'auto' ? ';answermode=auto' : ';answermode=manual';
  await writeFile(
    path.join(dir, 'accounts'),
    `<sip:${options.user ?? 'person'}@127.0.0.1:${port}>;regint=0${answermode};audio_codecs=${options.codecs ?? 'PCMU,PCMA'}${options.callTransfer === false ? ';call_transfer=no' : ''}\n`,
  );
  const child: ChildProcess = spawn('baresip', ['-f', dir], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  if (!(await waitForTcp('127.0.0.1', controlPort, { timeoutMs: 10_000, child }))) {
    child.kill('SIGKILL');
    throw new Error(`baresip did not start:\n${output}`);
  }
  const socket: Socket = await new Promise((resolve, reject) => {
    const s = connect(controlPort, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  const events: BaresipEvent[] = [];
  const waiting = new Map<string, (response: { ok: boolean; data: string }) => void>();
  const eventWaiters: { type: string; wake: (event: BaresipEvent) => void }[] = [];
  let buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    // Netstrings: `<length>:<json>,`
    for (;;) {
      const colon = buffer.indexOf(':');
      if (colon < 0) return;
      const length = Number(buffer.subarray(0, colon).toString());
      if (buffer.length < colon + 1 + length + 1) return;
      const message = JSON.parse(buffer.subarray(colon + 1, colon + 1 + length).toString());
      buffer = buffer.subarray(colon + 1 + length + 1);
      if (message.response)
        waiting.get(String(message.token))?.({ ok: message.ok, data: message.data ?? '' });
      else if (message.event) {
        events.push(message);
        for (const waiter of eventWaiters.filter((w) => w.type === message.type)) waiter.wake(message);
      }
    }
  });
  let token = 0;
  return {
    port,
    dir,
    events,
    command(command, params) {
      const id = String(++token);
      const json = JSON.stringify({ command, ...(params ? { params } : {}), token: id });
      socket.write(`${Buffer.byteLength(json)}:${json},`);
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    waitForEvent(type, limitMs = 30_000) {
      const seen = events.find((event) => event.type === type);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `baresip: no ${type} within ${limitMs} ms; events: ${events.map((e) => e.type).join(', ')}\n${output.slice(-3000)}`,
              ),
            ),
          limitMs,
        );
        eventWaiters.push({
          type,
          wake: (event) => {
            clearTimeout(timer);
            resolve(event);
          },
        });
      });
    },
    async stop() {
      socket.destroy();
      await stopChild(child, { signal: 'SIGTERM', graceMs: 3000 });
    },
    async kill() {
      socket.destroy();
      await stopChild(child, { signal: 'SIGKILL', graceMs: 3000 });
    },
  };
}
