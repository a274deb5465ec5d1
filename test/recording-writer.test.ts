import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import wavefile from 'wavefile';
import { createLogger } from '../lib/logger.js';
import { recordingFailures } from '../lib/metrics/service-metrics.js';
import {
  deleteRecording,
  hasRecording,
  openRecordingForRead,
  recordingPath,
} from '../lib/recordings/recording-files.js';
import { RecordingWriter } from '../lib/recordings/recording-writer.js';
import { openRecording } from '../media/call-recording.js';

// The recording writer on a real disk: two time-aligned channels, barge-in truncation, files that
// wavefile reads back after close and after the writing process was killed, a disk that fails
// (the recording stops, nothing throws), and bounded memory.

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'recordings-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const SAMPLES_PER_MS = 8;
const tone = (ms: number, value: number) => new Int16Array(ms * SAMPLES_PER_MS).fill(value);

/** The file as wavefile reads it: its format and each channel's samples. */
async function readBack(callId: string) {
  const wav = new wavefile.WaveFile(await readFile(recordingPath(dir, callId)));
  const [caller, agent] = wav.getSamples(false, Int16Array) as unknown as Int16Array[];
  const fmt = wav.fmt as { numChannels: number; sampleRate: number; bitsPerSample: number };
  return { fmt, caller, agent };
}

/** The values of `channel` from `fromMs` to `toMs`, as a set (a constant stretch is one value). */
const valuesBetween = (channel: Int16Array, fromMs: number, toMs: number) =>
  new Set(channel.subarray(fromMs * SAMPLES_PER_MS, toMs * SAMPLES_PER_MS));

describe('RecordingWriter', () => {
  test('two channels on one clock, gaps silent, as long as the last audio; wavefile reads it back', async () => {
    const callId = randomUUID();
    const writer = await RecordingWriter.open(dir, callId);
    // The agent's greeting is handed over whole before it plays; the caller streams in 20 ms frames.
    writer.agent(tone(1500, -700), 200);
    for (let ms = 0; ms < 3000; ms += 20) writer.caller(new Int16Array(160).fill(ms < 1000 ? 0 : 900), ms);
    writer.agent(tone(500, -300), 3000);
    await writer.close();
    await writer.close(); // idempotent

    const { fmt, caller, agent } = await readBack(callId);
    assert.deepEqual([fmt.numChannels, fmt.sampleRate, fmt.bitsPerSample], [2, 8000, 16]);
    assert.equal(caller.length, 3500 * SAMPLES_PER_MS, 'until the last agent audio ends');
    assert.equal(agent.length, caller.length);
    assert.deepEqual(valuesBetween(agent, 0, 200), new Set([0]));
    assert.deepEqual(valuesBetween(agent, 200, 1700), new Set([-700]));
    assert.deepEqual(valuesBetween(agent, 1700, 3000), new Set([0]));
    assert.deepEqual(valuesBetween(agent, 3000, 3500), new Set([-300]));
    assert.deepEqual(valuesBetween(caller, 0, 1000), new Set([0]));
    assert.deepEqual(valuesBetween(caller, 1000, 3000), new Set([900]));
    assert.deepEqual(valuesBetween(caller, 3000, 3500), new Set([0]));
  });

  test('a barge-in cuts the agent audio queued after it, and nothing before', async () => {
    const callId = randomUUID();
    const writer = await RecordingWriter.open(dir, callId);
    writer.agent(tone(6000, -500), 0); // a long answer, queued at once
    for (let ms = 0; ms < 2500; ms += 20) writer.caller(new Int16Array(160).fill(ms < 2000 ? 0 : 800), ms);
    writer.truncateAgentAfter(2400); // the caller spoke from 2 s; playback stopped at 2.4 s
    for (let ms = 2500; ms < 4000; ms += 20) writer.caller(new Int16Array(160).fill(800), ms);
    writer.agent(tone(1000, -200), 4000); // the next answer
    await writer.close();

    const { caller, agent } = await readBack(callId);
    assert.equal(agent.length, 5000 * SAMPLES_PER_MS);
    assert.deepEqual(valuesBetween(agent, 0, 2400), new Set([-500]));
    assert.deepEqual(valuesBetween(agent, 2400, 4000), new Set([0]));
    assert.deepEqual(valuesBetween(agent, 4000, 5000), new Set([-200]));
    assert.deepEqual(valuesBetween(caller, 2000, 4000), new Set([800]));
  });

  test('a writer killed mid-call leaves a valid file of what it flushed', async () => {
    const callId = randomUUID();
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(import.meta.dirname, 'support/recording-until-killed.ts'),
        dir,
        callId,
        '10',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('written') && resolve());
      child.on('exit', (code) => reject(new Error(`the writer exited (${code}) before writing`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));

    const { fmt, caller, agent } = await readBack(callId);
    assert.equal(fmt.numChannels, 2);
    // 10 s were written; all but the last couple of seconds (held back for barge-ins) were flushed.
    assert.ok(caller.length >= 7000 * SAMPLES_PER_MS, `${caller.length} samples`);
    assert.ok(caller.length <= 10_000 * SAMPLES_PER_MS);
    assert.equal(caller.length % (20 * SAMPLES_PER_MS), 0, 'whole frames only');
    assert.deepEqual(new Set(caller), new Set([1000]));
    assert.deepEqual(new Set(agent), new Set([-1000]));
  });

  // 20 minutes are forty times the writer's in-memory window: enough to show that nothing grows.
  test('a disk that fills up mid-call stops the recording, never the call: reported once, nothing thrown, the file keeps what it had', async () => {
    const callId = randomUUID();
    // The real disk until the file holds 3 s of audio, then ENOSPC on every write.
    let full = false;
    const files = {
      ...fs,
      writeSync: ((...args: Parameters<typeof fs.writeSync>) => {
        if (full)
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        return fs.writeSync(...args);
      }) as typeof fs.writeSync,
    };
    const failures: unknown[] = [];
    const writer = await RecordingWriter.open(dir, callId, {
      files,
      onFailure: (error) => failures.push(error),
    });
    for (let ms = 0; ms < 6_000; ms += 20) writer.caller(tone(20, 100), ms);
    full = true;
    // The call goes on: minutes more audio, a barge-in, agent lines and the close never throw.
    for (let ms = 6_000; ms < 120_000; ms += 20) {
      writer.caller(tone(20, 100), ms);
      if (ms % 5_000 === 0) writer.agent(tone(1_000, 200), ms);
      if (ms % 7_000 === 0) writer.truncateAgentAfter(ms);
    }
    await writer.close();
    await writer.close();
    assert.equal(writer.stopped, true);
    assert.equal(failures.length, 1, 'reported once');
    assert.match(String(failures[0]), /ENOSPC/);
    // What was on disk before the failure is a valid WAV that wavefile reads.
    const { caller } = await readBack(callId);
    assert.ok(caller.length >= 3 * 8000 && caller.length <= 6 * 8000, `${caller.length / 8000} s kept`);
  });

  test('a failing close (EIO on fsync) does not reject', async () => {
    const failures: unknown[] = [];
    const files = {
      ...fs,
      fsyncSync: (() => {
        throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
      }) as typeof fs.fsyncSync,
    };
    const writer = await RecordingWriter.open(dir, randomUUID(), {
      files,
      onFailure: (error) => failures.push(error),
    });
    writer.caller(tone(500, 100), 0);
    await writer.close();
    assert.equal(failures.length, 1);
    assert.match(String(failures[0]), /EIO/);
  });

  test('a recording that cannot be opened (no room for the file) rejects, so the gateway goes on without one', async () => {
    // A folder where a file is: mkdir fails as a full or read-only disk would.
    const notADir = path.join(dir, 'a-file');
    await writeFile(notADir, 'x');
    await assert.rejects(RecordingWriter.open(notADir, randomUUID()));
  });

  test('twenty minutes of audio written as fast as it can be keep memory flat', async () => {
    const MINUTES = 20;
    const callId = randomUUID();
    const writer = await RecordingWriter.open(dir, callId);
    const frame = new Int16Array(160).fill(300);
    const sentence = tone(4000, -300);
    // What stays alive after a full collection: garbage between flushes is not what grows.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const memoryAt = () => {
      gc(); // twice: the first leaves some of what was just freed
      gc();
      return process.memoryUsage().arrayBuffers + process.memoryUsage().heapUsed;
    };
    let peak = 0;
    const before = memoryAt();
    for (let ms = 0; ms < MINUTES * 60_000; ms += 20) {
      if (ms % 10_000 === 0) writer.agent(sentence, ms + 500);
      writer.caller(frame, ms);
      if (ms % 120_000 === 0) peak = Math.max(peak, memoryAt() - before);
    }
    await writer.close();
    assert.ok(peak < 8 * 1024 * 1024, `memory grew by ${Math.round(peak / 1024 / 1024)} MB`);
    const { size } = (await openRecordingForRead(dir, callId))!;
    assert.equal(size, 44 + MINUTES * 60 * 8000 * 4);
    await deleteRecording(dir, callId);
  });
});

describe('recording files', () => {
  test('exist, are read in ranges and deleted by call id; nothing else becomes a path', async () => {
    const callId = randomUUID();
    assert.equal(await hasRecording(dir, callId), false);
    assert.equal(await openRecordingForRead(dir, callId), null);
    const writer = await RecordingWriter.open(dir, callId.toUpperCase());
    writer.caller(tone(100, 5), 0);
    await writer.close();
    assert.equal(await hasRecording(dir, callId), true);

    const reader = (await openRecordingForRead(dir, callId))!;
    assert.equal(reader.size, 44 + 800 * 4);
    const chunks: Buffer[] = [];
    for await (const chunk of (await reader.stream({ start: 0, end: 3 }))!) chunks.push(chunk as Buffer);
    assert.equal(Buffer.concat(chunks).toString('latin1'), 'RIFF');

    assert.equal(await deleteRecording(dir, callId), true);
    assert.equal(await hasRecording(dir, callId), false);
    assert.equal(await deleteRecording(dir, callId), false);
    for (const bad of ['../etc/passwd', `${callId}/..`, `${callId}.wav`, '']) {
      assert.throws(() => recordingPath(dir, bad), /not a call id/);
      await assert.rejects(hasRecording(dir, bad), /not a call id/);
    }
  });
});

describe('the media gateway’s recording of a call', () => {
  const failures = async (stage: string) =>
    (await recordingFailures.get()).values.find((value) => value.labels.stage === stage)?.value ?? 0;

  test('a disk that will not take the file: no recording, the call goes on; a log line and recording_failures_total{stage="open"}', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line) => lines.push(line) });
    const notADir = path.join(dir, 'not-a-folder');
    await writeFile(notADir, 'x');
    const before = await failures('open');
    assert.equal(await openRecording(notADir, randomUUID(), logger), null);
    assert.equal(await failures('open'), before + 1);
    assert.match(lines.join('\n'), /recording not opened: the call goes on without one/);
  });

  test('a disk that fails mid-call: recording_failures_total{stage="write"} once, and a log line', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line) => lines.push(line) });
    let broken = false;
    const files = {
      ...fs,
      writeSync: ((...args: Parameters<typeof fs.writeSync>) => {
        if (broken) throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
        return fs.writeSync(...args);
      }) as typeof fs.writeSync,
    };
    const before = await failures('write');
    const recording = (await openRecording(dir, randomUUID(), logger, { files }))!;
    broken = true;
    for (let ms = 0; ms < 10_000; ms += 20) recording.caller(tone(20, 100), ms);
    await recording.close();
    assert.equal(await failures('write'), before + 1);
    assert.match(lines.join('\n'), /recording stopped: the disk failed; the call goes on without it/);
  });

  test('a real disk that fills mid-call (a 48 KB tmpfs, full in the middle of a write): the recording stops where the disk did, a valid WAV of what fit; one failure', {
    skip: canMountTmpfs() ? false : 'mounting a size-limited tmpfs needs root (CAP_SYS_ADMIN)',
  }, async () => {
    const small = await mkdtemp(path.join(tmpdir(), 'small-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48k', 'tmpfs', small]);
    try {
      const lines: string[] = [];
      const logger = createLogger('info', { write: (line) => lines.push(line) });
      const callId = randomUUID();
      const before = await failures('write');
      const recording = (await openRecording(small, callId, logger))!;
      // Ten seconds of a call (32 KB a second on disk): the disk fills in the middle of the second second's write.
      for (let ms = 0; ms < 10_000; ms += 20) {
        recording.caller(tone(20, 1000), ms);
        if (ms % 1000 === 0) recording.agent(tone(500, -1000), ms);
      }
      assert.equal(recording.stopped, true, 'the recording stopped');
      await recording.close();
      assert.equal(await failures('write'), before + 1);
      assert.equal(lines.filter((line) => line.includes('recording stopped')).length, 1);
      // The header describes only bytes that are on disk: wavefile reads it whole.
      const file = await readFile(recordingPath(small, callId));
      const wav = new wavefile.WaveFile(file);
      const [caller] = wav.getSamples(false, Int16Array) as unknown as Int16Array[];
      assert.ok(caller.length >= 8000, `${caller.length / 8000} s kept`);
      const described = file.readUInt32LE(40);
      assert.ok(
        44 + described <= file.length,
        `the header says ${described} bytes of ${file.length - 44} on disk`,
      );
      assert.equal(file.readUInt32LE(4), 36 + described);
      assert.deepEqual(new Set(caller), new Set([1000]));
    } finally {
      execFileSync('umount', [small]);
      await rm(small, { recursive: true, force: true });
    }
  });
});

/** Whether this process may mount a tmpfs (a root user with CAP_SYS_ADMIN, as on the CI machine). */
function canMountTmpfs(): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = fs.mkdtempSync(path.join(tmpdir(), 'mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe]);
    return true;
  } catch {
    return false;
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
}
