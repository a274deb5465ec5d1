import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

// `npm run bench [-- NAME]`: runs every bench/<name>.ts (or the one named NAME, else those whose
// name contains NAME), one after another, each in its own process so one bench's leftovers never
// skew the next. `-- turn-taking` is that bench alone, not turn-taking-gateway too.

const dir = path.dirname(new URL(import.meta.url).pathname);
const filter = process.argv[2];
const names = readdirSync(dir)
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
  .map((file) => file.slice(0, -3));
const benches =
  filter && names.includes(filter)
    ? [filter]
    : names.filter((name) => !filter || name.includes(filter)).sort();

if (benches.length === 0) {
  console.error(filter ? `no bench matches "${filter}"` : 'no benches in bench/');
  process.exit(1);
}

let failed = 0;
for (const name of benches) {
  console.log(`\n=== bench ${name} ===`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, `${name}.ts`)], {
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    failed++;
    console.error(`bench ${name} failed (exit ${result.status ?? result.signal})`);
  }
}
process.exit(failed ? 1 : 0);
