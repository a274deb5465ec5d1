import { parseArgs } from 'node:util';
import {
  type Command,
  type FlagSpec,
  type FlagSpecs,
  type FlagValues,
  flagName,
  UsageError,
} from './command.js';
import { commandHelp, groupHelp, overallHelp } from './help.js';

// Turns argv into the command to run with typed flag values, or into help text. The leading words
// pick the command; node:util's parseArgs reads its flags. Every way of getting the CLI wrong is a
// UsageError with a message that names the flag or word at fault (test/admin-cli-parsing.test.ts).

export type Invocation =
  | { kind: 'help'; text: string }
  | { kind: 'run'; command: Command; values: FlagValues<FlagSpecs>; json: boolean };

const GLOBAL_FLAGS = new Set(['--json', '--help', '-h']);

export function parseInvocation(argv: readonly string[], commands: readonly Command[]): Invocation {
  const json = argv.includes('--json');
  const help = argv.includes('--help') || argv.includes('-h');
  const rest = argv.filter((arg) => !GLOBAL_FLAGS.has(arg));
  const firstFlag = rest.findIndex((arg) => arg.startsWith('-'));
  const words = firstFlag === -1 ? rest : rest.slice(0, firstFlag);
  const flags = firstFlag === -1 ? [] : rest.slice(firstFlag);

  if (words.length === 0) {
    if (help) return { kind: 'help', text: overallHelp(commands) };
    throw new UsageError('no command given; run with --help to list the commands');
  }
  const command =
    commands.find((c) => c.name === words.slice(0, 2).join(' ')) ?? commands.find((c) => c.name === words[0]);
  if (!command) {
    const group = commands.filter((c) => c.name.startsWith(`${words[0]} `));
    if (group.length === 0)
      throw new UsageError(`unknown command "${words[0]}"; run with --help to list the commands`);
    if (help && words.length === 1) return { kind: 'help', text: groupHelp(words[0], group) };
    throw new UsageError(
      words.length === 1
        ? `"${words[0]}" needs a subcommand: ${group.map((c) => c.name).join(', ')}`
        : `unknown command "${words.slice(0, 2).join(' ')}"; ${words[0]} commands: ${group.map((c) => c.name).join(', ')}`,
    );
  }
  if (help) return { kind: 'help', text: commandHelp(command) };
  const extra = words.slice(command.name.split(' ').length);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}" after "${command.name}"`);
  return { kind: 'run', command, values: parseFlags(command, flags), json };
}

function parseFlags(command: Command, args: readonly string[]): FlagValues<FlagSpecs> {
  const keyOf = new Map(Object.keys(command.flags).map((key) => [flagName(key), key]));
  // node:util reads the flags, each as text: the CLI types the values itself (parseValue). Not
  // strict, so that a value may start with a dash (`--calls-per-day -5`) and every mistake gets
  // the CLI's own message (docs/operator-cli.md), in the order the flags were given.
  const { tokens } = parseArgs({
    args: [...args],
    options: Object.fromEntries(
      [...keyOf.keys()].map((name) => [name.slice(2), { type: 'string' as const }]),
    ),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: FlagValues<FlagSpecs> = {};
  for (const token of tokens) {
    const arg = args[token.index];
    if (token.kind === 'positional' || (token.kind === 'option' && !token.rawName.startsWith('--')))
      throw new UsageError(`unexpected argument "${arg}"`);
    const name = token.kind === 'option' ? token.rawName : arg;
    const key = keyOf.get(name);
    if (token.kind === 'option-terminator' || key === undefined) {
      const known = [...keyOf.keys(), '--json', '--help'].join(', ');
      throw new UsageError(`unknown flag ${name} for "${command.name}"; its flags are ${known}`);
    }
    if (key in values) throw new UsageError(`${name} is given more than once`);
    const spec = command.flags[key];
    // A value that starts with "--" is taken for a forgotten value; `--flag=--text` passes one.
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith('--')))
      throw new UsageError(`${name} needs a value (${spec.value})`);
    values[key] = parseValue(name, spec, token.value);
  }
  const missing = Object.entries(command.flags)
    .filter(([key, spec]) => spec.required && !(key in values))
    .map(([key]) => flagName(key));
  if (missing.length > 0) {
    throw new UsageError(`"${command.name}" needs ${missing.join(', ')}; run it with --help for its flags`);
  }
  return values;
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2}))?$/;

function parseValue(name: string, spec: FlagSpec, raw: string): string | number | string[] | Date {
  switch (spec.type) {
    case 'string':
      return raw;
    case 'integer':
      if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
        throw new UsageError(`${name} must be a whole number, got "${raw}"`);
      }
      return Number(raw);
    case 'list': {
      const items = raw
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
      if (items.length === 0) throw new UsageError(`${name} needs at least one value (${spec.value})`);
      return items;
    }
    case 'date': {
      // A time without a zone would silently depend on the machine's zone, so one is required.
      const date = new Date(raw);
      if (!ISO_8601.test(raw) || Number.isNaN(date.getTime()) || !isCalendarDay(raw)) {
        throw new UsageError(
          `${name} must be an ISO 8601 date (2030-01-31) or date-time with zone (2030-01-31T12:00:00Z), got "${raw}"`,
        );
      }
      return date;
    }
  }
}

/** JavaScript rolls 2030-02-31 over to March; an operator meant a day that exists. */
function isCalendarDay(iso: string): boolean {
  const [year, month, day] = iso.slice(0, 10).split('-').map(Number);
  return month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}
