import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../scripts/admin/cli.js';
import { type Run, runProcess } from './run-process.js';

// The operator CLI two ways. `adminProcess` is `npm run admin` without npm: a real Node process on
// scripts/admin.ts, for what only a process shows (the exit code, stdout claimed for the JSON
// object, the embedded PostgreSQL, the bin script). `adminInProcess` calls the same entry point
// that process calls, runCli, with the same arguments and environment and its output captured: the
// rules of each command without paying a process start (about 5 s of CPU on a loaded 2-core
// machine) per case.

const root = fileURLToPath(new URL('../..', import.meta.url));
export const adminTs = path.join(root, 'scripts/admin.ts');

export function adminProcess(
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string },
): Promise<Run> {
  return runProcess(process.execPath, ['--import', 'tsx', adminTs, ...args], {
    cwd: options.cwd ?? root,
    env: options.env,
  });
}

export async function adminInProcess(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(
    args,
    {
      out: (text) => {
        stdout += text;
      },
      err: (text) => {
        stderr += text;
      },
    },
    env,
  );
  return { code, stdout, stderr };
}
