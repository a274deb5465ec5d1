// Which failures mean "PostgreSQL cannot be reached right now" rather than "this statement is
// wrong". The API answers the first with 503 (upstream_unavailable, or auth_unavailable while a
// key is checked), the CLI says so in one line, and the ORM's driver (db/releasing-dialect.ts)
// throws away the connection such a failure leaves behind.

/** SQLSTATE classes and codes of a lost or refused connection. */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[1-3]|53300|53400)$/;
/** Node's socket errors. */
const SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);
/** `pg` and `pg-pool` report these without a code. */
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'connection error',
  'timeout exceeded when trying to connect',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
  'terminating connection due to administrator command',
  'the database system is starting up',
  'the database system is shutting down',
  // A database closed to connections (`allow_connections false`, SQLSTATE 55000).
  'is not currently accepting connections',
];

/** True when `error` (or anything in its `cause` chain) says the database could not be reached. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 8; depth++) {
    if (typeof current !== 'object') return false;
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || SOCKET_ERRORS.has(code))) return true;
    if (current instanceof AggregateError && current.errors.some(isDatabaseUnavailable)) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((text) => message.includes(text)))
      return true;
    current = cause;
  }
  return false;
}
