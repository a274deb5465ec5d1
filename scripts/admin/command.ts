import type { EntityManager } from '@mikro-orm/postgresql';
import type { Settings } from '../../lib/settings.js';

// What an operator command is: a name, the flags it declares, and a function from parsed flag
// values to an output. Adding a command is a new module in commands/ plus one line in
// commands/index.ts; parsing, help, --json and error handling come from here.

export type FlagType = 'string' | 'integer' | 'list' | 'date';

export interface FlagSpec {
  type: FlagType;
  required?: boolean;
  /** Placeholder shown in help, e.g. `ID`, `owner|admin|member|viewer`. */
  value: string;
  help: string;
}

export type FlagSpecs = Record<string, FlagSpec>;

type ValueOf<T extends FlagType> = T extends 'integer'
  ? number
  : T extends 'list'
    ? string[]
    : T extends 'date'
      ? Date
      : string;

/** Parsed flags keyed like the spec (camelCase key `expiresAt` is the flag `--expires-at`). */
export type FlagValues<F extends FlagSpecs> = {
  [K in keyof F]: F[K] extends { required: true } ? ValueOf<F[K]['type']> : ValueOf<F[K]['type']> | undefined;
};

/** What a command prints: `json` with --json (one object), `text` otherwise. */
export interface CommandOutput {
  json: Record<string, unknown>;
  text: string;
}

/** What a command may use; each resource is opened on first use and closed when the CLI exits. */
export interface CommandContext {
  settings: Settings;
  /** A fresh EntityManager on the service's database (migrated). */
  em(): Promise<EntityManager>;
  /** Registers cleanup to run before exit, last registered first. */
  onClose(close: () => Promise<void>): void;
}

export interface Command<F extends FlagSpecs = FlagSpecs> {
  /** The words that select it, e.g. `workspace create`. */
  name: string;
  summary: string;
  flags: F;
  run(values: FlagValues<F>, context: CommandContext): Promise<CommandOutput>;
}

/** Keeps the flag literals so `run` sees precise value types. */
export function defineCommand<const F extends FlagSpecs>(command: Command<F>): Command<F> {
  return command;
}

/** Wrong use of the CLI itself (unknown command or flag, missing or malformed value): exit code 2. */
export class UsageError extends Error {}

export function flagName(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}
