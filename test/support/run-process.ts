import { spawn } from 'node:child_process';

// A child process run to its end, for tests of command-line tools.

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command` with `args` and answers its exit code and everything it wrote. */
export function runProcess(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
) {
  return new Promise<Run>((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
