import type { Configuration } from '@mikro-orm/core';
import { PostgreSqlConnection, PostgreSqlDriver } from '@mikro-orm/postgresql';
import type { DatabaseConnection, Driver, TransactionSettings } from 'kysely';
import pg, { type PoolConfig } from 'pg';
import { isDatabaseUnavailable } from './database-errors.js';

// Kysely (under MikroORM 7.2.1) hands a transaction's connection back to the pool only after its
// COMMIT or ROLLBACK succeeds. When the server has dropped the connection, both fail, and the dead
// connection keeps its pool slot for good: after `max` such transactions every later query of the
// process waits forever. This driver hands such a connection back itself, so `pg-pool` (which sees
// it is no longer queryable) destroys it and frees the slot; a ROLLBACK that follows a failed
// COMMIT is then refused here instead of running on a connection that another request may already
// hold.

/**
 * The pool's client class. When the server ends a session (a FATAL message, e.g. 57P01 on
 * `pg_terminate_backend` or a fast shutdown) the socket closes a moment later; until then `pg`
 * still counts the client as queryable, and `pg-pool` would hand it out again. Marking it at once
 * makes the pool destroy it on release (pg-pool's own check of `_queryable`).
 */
export class SessionAwareClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    const connection = (this as unknown as { connection: NodeJS.EventEmitter }).connection;
    connection.on('errorMessage', (message: { severity?: string }) => {
      if (message.severity === 'FATAL') (this as unknown as { _queryable: boolean })._queryable = false;
    });
  }
}

/** A kysely driver that releases connections whose transaction ended in a lost connection. */
class ReleasingDriver implements Driver {
  readonly #inner: Driver;
  /** Connections already handed back after a failed COMMIT: nothing may run on them. */
  readonly #released = new WeakSet<DatabaseConnection>();

  constructor(inner: Driver) {
    this.#inner = inner;
  }

  init() {
    return this.#inner.init();
  }

  acquireConnection() {
    return this.#inner.acquireConnection();
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
    return this.#inner.beginTransaction(connection, settings);
  }

  async commitTransaction(connection: DatabaseConnection) {
    try {
      await this.#inner.commitTransaction(connection);
    } catch (error) {
      // A COMMIT refused by a healthy server (a serialization failure) leaves the connection usable:
      // the ROLLBACK that follows releases it as usual.
      if (isDatabaseUnavailable(error)) await this.#release(connection);
      throw error;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection) {
    if (this.#released.has(connection)) {
      throw new Error('Connection terminated: the transaction was lost with its connection.');
    }
    try {
      await this.#inner.rollbackTransaction(connection);
    } catch (error) {
      // Whatever made ROLLBACK fail, the connection is of no use any more.
      await this.#release(connection);
      throw error;
    }
  }

  async releaseConnection(connection: DatabaseConnection) {
    if (this.#released.has(connection)) return;
    await this.#inner.releaseConnection(connection);
  }

  destroy() {
    return this.#inner.destroy();
  }

  async #release(connection: DatabaseConnection) {
    if (this.#released.has(connection)) return;
    this.#released.add(connection);
    await this.#inner.releaseConnection(connection).catch(() => undefined);
  }
}

// `savepoint`, `rollbackToSavepoint` and `releaseSavepoint` are optional on Driver; kysely checks
// for them, so they are passed through only when the inner driver has them.
function releasingDriver(inner: Driver): Driver {
  const driver = new ReleasingDriver(inner);
  for (const name of ['savepoint', 'rollbackToSavepoint', 'releaseSavepoint'] as const) {
    const method = inner[name];
    if (method) Object.defineProperty(driver, name, { value: method.bind(inner) });
  }
  return driver;
}

class ResilientPostgreSqlConnection extends PostgreSqlConnection {
  override createKyselyDialect(overrides: PoolConfig) {
    const dialect = super.createKyselyDialect(overrides);
    const createDriver = dialect.createDriver.bind(dialect);
    dialect.createDriver = () => releasingDriver(createDriver());
    return dialect;
  }
}

/** MikroORM's PostgreSQL driver on ResilientPostgreSqlConnection (set as `driver` in db/orm-config.ts). */
export class ResilientPostgreSqlDriver extends PostgreSqlDriver {
  constructor(config: Configuration) {
    super(config);
    // AbstractSqlDriver builds its connection from the class it is given; PostgreSqlDriver gives its own.
    (this as unknown as { connection: PostgreSqlConnection }).connection = new ResilientPostgreSqlConnection(
      this.config,
    );
  }
}
