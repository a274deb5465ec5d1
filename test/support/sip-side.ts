import { type ChildProcess, spawn } from 'node:child_process';
import { stopChild } from '../../scripts/processes.js';
import { resolveSipSide } from '../../scripts/sip-side.js';
import { waitForHealth } from './wait-for.js';

// The SIP side (sip/) as `npm start` runs it: the binary built and cached by scripts/sip-side.ts,
// a process of its own with the service's settings in its environment, healthy on its control port.

export interface TestSipSide {
  child: ChildProcess;
  /** What it logged (JSON lines). */
  output(): string;
  stop(): Promise<void>;
}

export async function startTestSipSide(env: Record<string, string>): Promise<TestSipSide> {
  const binary = await resolveSipSide();
  const child = spawn(binary, [], {
    env: { ...process.env, LOG_LEVEL: process.env.TEST_SIP_LOG_LEVEL ?? 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [child.stdout, child.stderr])
    stream?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    await waitForHealth(`${env.SIP_CONTROL_URL}/healthz`, 20_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`the SIP side did not start: ${String(error)}\n${output}`);
  }
  return { child, output: () => output, stop: () => stopChild(child, { signal: 'SIGTERM', graceMs: 5000 }) };
}
