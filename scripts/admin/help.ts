import { type Command, flagName } from './command.js';

// Help text, generated from the command table so it cannot drift from what is parsed.

const USAGE = 'npm run --silent admin -- <command> [flags]   (or: voice-agent-admin <command> [flags])';

const GLOBAL = [
  '  --json   print exactly one JSON object on stdout',
  '  --help   show help for the command',
  '',
  'Uses DATABASE_URL when set, else the embedded PostgreSQL under .data/ (started and stopped',
  'again when it is not running). Exit code 0 on success, 1 when the command is refused,',
  '2 when the command line is wrong; errors are one line on stderr.',
];

export function overallHelp(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `Usage: ${USAGE}`,
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Global flags:',
    ...GLOBAL,
    '',
  ].join('\n');
}

export function groupHelp(group: string, commands: readonly Command[]): string {
  return [`"${group}" commands:`, ...commands.map((c) => `  ${c.name}  ${c.summary}`), ''].join('\n');
}

export function commandHelp(command: Command): string {
  const flags = Object.entries(command.flags).map(([key, spec]) => {
    const usage = `${flagName(key)} ${spec.value}`;
    return { usage: spec.required ? usage : `[${usage}]`, help: spec.help };
  });
  const width = Math.max(0, ...flags.map((f) => f.usage.length));
  return [
    `Usage: ${command.name} ${flags.map((f) => f.usage).join(' ')} [--json]`.trimEnd(),
    '',
    command.summary,
    ...(flags.length ? ['', 'Flags:', ...flags.map((f) => `  ${f.usage.padEnd(width)}  ${f.help}`)] : []),
    '',
    'Global flags:',
    ...GLOBAL,
    '',
  ].join('\n');
}
