import type { LogLevel } from './settings.js';
import { activeTraceIds } from './tracing/trace-ids.js';

// Structured JSON logs, one object per line. Callers pass ids and facts, never secrets: no
// Authorization header, key secret or webhook secret is ever handed to a logger.

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  isEnabled(level: LogLevel): boolean;
  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger;
}

export function createLogger(
  level: LogLevel,
  options: { write?: (line: string) => void; fields?: LogFields } = {},
): Logger {
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const base = options.fields ?? {};
  const threshold = ORDER[level];
  const log = (lineLevel: LogLevel, msg: string, fields?: LogFields) => {
    if (ORDER[lineLevel] < threshold) return;
    // With tracing on, a line written inside a span names its trace (lib/tracing/tracing.ts).
    const traced = activeTraceIds();
    write(
      JSON.stringify(
        { time: new Date().toISOString(), level: lineLevel, msg, ...base, ...traced, ...fields },
        errors,
      ),
    );
  };
  return {
    debug: (msg, fields) => log('debug', msg, fields),
    info: (msg, fields) => log('info', msg, fields),
    warn: (msg, fields) => log('warn', msg, fields),
    error: (msg, fields) => log('error', msg, fields),
    isEnabled: (lineLevel) => ORDER[lineLevel] >= threshold,
    child: (fields) => createLogger(level, { write, fields: { ...base, ...fields } }),
  };
}

/** Errors become { name, message, stack } instead of `{}`. */
function errors(_key: string, value: unknown) {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}
