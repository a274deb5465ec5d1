import { isDatabaseUnavailable } from '../../db/database-errors.js';
import { OperatorError } from '../../lib/accounts.js';
import { loadSettings } from '../../lib/settings.js';
import { UsageError } from './command.js';
import { commands } from './commands/index.js';
import { createCommandContext } from './context.js';
import { parseInvocation } from './parse-args.js';

// Runs one operator command: parse, run on the service's database, print, clean up, and say
// which exit code the process should end with.

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

export const EXIT_OK = 0;
/** The command was refused (unknown id, invalid value) or failed. */
export const EXIT_FAILED = 1;
/** The command line itself is wrong. */
export const EXIT_USAGE = 2;

export async function runCli(argv: readonly string[], io: CliIo, env = process.env): Promise<number> {
  let invocation: ReturnType<typeof parseInvocation>;
  try {
    invocation = parseInvocation(argv, commands);
  } catch (error) {
    io.err(`error: ${oneLine(error)}\n`);
    return error instanceof UsageError ? EXIT_USAGE : EXIT_FAILED;
  }
  if (invocation.kind === 'help') {
    io.out(invocation.text);
    return EXIT_OK;
  }

  const debug = env.LOG_LEVEL?.toLowerCase() === 'debug';
  const report = (error: unknown, prefix: string) => {
    const reason = oneLine(error);
    io.err(
      `${prefix}: ${isDatabaseUnavailable(error) ? `the database is unreachable (${reason})` : reason}\n`,
    );
    if (debug && error instanceof Error && !(error instanceof OperatorError)) io.err(`${error.stack}\n`);
  };
  let settings: ReturnType<typeof loadSettings>;
  try {
    settings = loadSettings(env);
  } catch (error) {
    report(error, 'error');
    return EXIT_FAILED;
  }
  const context = createCommandContext(settings, invocation.json ? () => {} : (line) => io.err(`${line}\n`));
  let exitCode = EXIT_OK;
  try {
    const output = await invocation.command.run(invocation.values, context);
    io.out(invocation.json ? `${JSON.stringify(output.json)}\n` : `${output.text}\n`);
  } catch (error) {
    report(error, 'error');
    exitCode = EXIT_FAILED;
  }
  try {
    await context.close();
  } catch (error) {
    // The command's effect (and a printed key secret) stands; only the clean-up failed.
    report(error, exitCode === EXIT_OK ? 'warning' : 'error');
  }
  return exitCode;
}

function oneLine(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  // Node reports a refused connection to several addresses as an AggregateError with no message.
  if (!message && error instanceof AggregateError) message = error.errors.map((e) => oneLine(e)).join('; ');
  if (!message && error && typeof error === 'object' && 'code' in error) message = String(error.code);
  return message.replace(/\s*\n\s*/g, ' ').trim() || 'unknown error';
}
