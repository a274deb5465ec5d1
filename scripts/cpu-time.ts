import { readFileSync } from 'node:fs';

/**
 * This process's CPU time plus that of the children it has reaped (and theirs, once reaped):
 * /proc/self/stat's cutime and cstime, in clock ticks of 10 ms. Not Linux: its own time only.
 */
export function cpuMsWithReapedChildren(): number {
  const own = process.cpuUsage();
  let children = 0;
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // The fields after the command's name in parentheses start with the third, the state.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    children = (Number(fields[16 - 3]) + Number(fields[17 - 3])) * 10;
  } catch {
    children = 0;
  }
  return (own.user + own.system) / 1000 + children;
}
