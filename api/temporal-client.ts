import { Client, Connection } from '@temporalio/client';
import type { TemporalConnectionOptions } from '../lib/temporal-connection.js';
import { clientTracingInterceptors } from '../lib/tracing/tracing.js';

export interface LazyTemporalClient {
  /** Connects on first use; a failed connect is retried by the next call. */
  get(): Promise<Client>;
  close(): Promise<void>;
}

/** The API needs Temporal only for some routes, so it starts without it and connects on demand. */
export function lazyTemporalClient(
  options: TemporalConnectionOptions & { namespace: string },
): LazyTemporalClient {
  const { namespace, ...connectionOptions } = options;
  let pending: Promise<Client> | undefined;
  return {
    get() {
      pending ??= Connection.connect(connectionOptions)
        .then(
          (connection) => new Client({ connection, namespace, interceptors: clientTracingInterceptors() }),
        )
        .catch((error) => {
          pending = undefined;
          throw error;
        });
      return pending;
    },
    async close() {
      const client = await pending?.catch(() => undefined);
      pending = undefined;
      await client?.connection.close();
    },
  };
}
