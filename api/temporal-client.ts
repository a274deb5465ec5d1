import { Client, Connection } from '@temporalio/client';

export interface LazyTemporalClient {
  /** Connects on first use; a failed connect is retried by the next call. */
  get(): Promise<Client>;
  close(): Promise<void>;
}

/** The API needs Temporal only for some routes, so it starts without it and connects on demand. */
export function lazyTemporalClient(options: { address: string; namespace: string }): LazyTemporalClient {
  let pending: Promise<Client> | undefined;
  return {
    get() {
      pending ??= Connection.connect({ address: options.address })
        .then((connection) => new Client({ connection, namespace: options.namespace }))
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
