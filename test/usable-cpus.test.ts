import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// The local speech server sizes its thread pools by the CPUs it may use
// (scripts/local-speech/usable_cpus.py): its affinity, at most its cgroup's CPU quota. The cgroup
// files are laid out in a temporary folder, as a container or a Kubernetes pod shows them.

const run = promisify(execFile);
const SCRIPTS = fileURLToPath(new URL('../scripts/local-speech', import.meta.url));
const root = await mkdtemp(path.join(os.tmpdir(), 'usable-cpus-'));
after(() => rm(root, { recursive: true, force: true }));
/** What this process may use (Node reads the same affinity). */
const affinity = os.availableParallelism();

/** usable_cpus() over a cgroup tree of `files` (path → content) and a /proc/self/cgroup of `self`. */
async function usableCpus(files: Record<string, string>, self = '0::/\n', taskset?: string): Promise<number> {
  const tree = await mkdtemp(path.join(root, 'tree-'));
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(tree, file)), { recursive: true });
    await writeFile(path.join(tree, file), content);
  }
  await writeFile(path.join(tree, 'self-cgroup'), self);
  const code = [
    'import sys',
    'from pathlib import Path',
    `sys.path.insert(0, ${JSON.stringify(SCRIPTS)})`,
    'from usable_cpus import usable_cpus',
    `print(usable_cpus(Path(${JSON.stringify(path.join(tree, 'cgroup'))}), Path(${JSON.stringify(path.join(tree, 'self-cgroup'))})))`,
  ].join('\n');
  const python = ['python3', '-c', code];
  const argv = taskset ? ['taskset', '-c', taskset, ...python] : python;
  const { stdout } = await run(argv[0], argv.slice(1));
  return Number(stdout.trim());
}

test('without a quota, the CPUs of the process’s affinity (taskset -c 0: one), not the machine’s count', async () => {
  assert.equal(await usableCpus({}), affinity);
  assert.equal(await usableCpus({ 'cgroup/cpu.max': 'max 100000\n' }), affinity);
  assert.equal(await usableCpus({}, '0::/\n', '0'), 1);
});

test('a cgroup v2 quota (cpu.max), rounded up, from the process’s own cgroup up to the root: the least of them', async () => {
  // A container sees its own cgroup as the root: `docker run --cpus 0.5`.
  assert.equal(await usableCpus({ 'cgroup/cpu.max': '50000 100000\n' }), 1);
  // A pod's limit one level up from its container's own, which has none.
  const pod = {
    'cgroup/kubepods/pod1/app/cpu.max': 'max 100000\n',
    'cgroup/kubepods/pod1/cpu.max': '100000 100000\n',
    'cgroup/kubepods/cpu.max': 'max 100000\n',
  };
  assert.equal(await usableCpus(pod, '0::/kubepods/pod1/app\n'), 1);
  // A container allowed 3 CPUs in a pod allowed 1: the pod's.
  const nested = { ...pod, 'cgroup/kubepods/pod1/app/cpu.max': '300000 100000\n' };
  assert.equal(await usableCpus(nested, '0::/kubepods/pod1/app\n'), 1);
  // 1.5 CPUs are 2 threads, no more than the affinity allows.
  assert.equal(await usableCpus({ 'cgroup/cpu.max': '150000 100000\n' }), Math.min(affinity, 2));
  // An unreadable limit is no limit.
  assert.equal(await usableCpus({ 'cgroup/cpu.max': 'garbage\n' }), affinity);
});

test('a cgroup v1 quota (cpu.cfs_quota_us over cpu.cfs_period_us); -1 is none', async () => {
  const v1 = (quota: string) => ({
    'cgroup/cpu/cpu.cfs_quota_us': quota,
    'cgroup/cpu/cpu.cfs_period_us': '100000\n',
  });
  assert.equal(await usableCpus(v1('100000\n')), 1);
  assert.equal(await usableCpus(v1('-1\n')), affinity);
  // Under a quota and held to one CPU: one.
  assert.equal(await usableCpus(v1('400000\n'), '0::/\n', '0'), 1);
});
