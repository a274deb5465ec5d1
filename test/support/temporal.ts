import { TestWorkflowEnvironment } from '@temporalio/testing';
import { resolveTemporalCli, resolveTemporalTestServer } from '../../scripts/temporal-binaries.js';
import { startPrivateTemporalDevServer, type TemporalDevServer } from '../../scripts/temporal-dev-server.js';

// Temporal for tests, two kinds:
// - createTimeSkippingEnvironment(): the SDK's time-skipping test server, one per test file, for
//   workflow logic with long timers (a day-long sleep costs no wall-clock time).
// - sharedDevServer(): a real dev server for end-to-end tests (API + workers + PostgreSQL).
//   scripts/test.ts starts one for the whole run and sets TEST_TEMPORAL_ADDRESS; a file run on its
//   own (`node --import tsx --test test/x.test.ts`) starts a private one, with the search attributes.
// Binaries come from TEMPORAL_TEST_SERVER_PATH / TEMPORAL_CLI_PATH (set by scripts/test.ts), else
// from scripts/temporal-binaries.ts (PATH, cache, provisioning).

export async function createTimeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  const path = process.env.TEMPORAL_TEST_SERVER_PATH || (await resolveTemporalTestServer());
  // The SDK gives its test server 5 s to listen (not configurable); three test files at once on
  // two cores have made it miss that once. A server that was late is started again, twice at most.
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({
        server: { executable: { type: 'existing-path', path } },
      });
    } catch (error) {
      if (attempt === 3 || !/did not start within/.test(`${error}`)) throw error;
    }
  }
}

export interface SharedDevServer {
  /** host:port of the gRPC frontend. */
  address: string;
  namespace: string;
  /** Releases this user's hold; the private server stops when its last user closes it. */
  close(): Promise<void>;
}

let own: { server: Promise<TemporalDevServer>; users: number } | undefined;

export async function sharedDevServer(): Promise<SharedDevServer> {
  const address = process.env.TEST_TEMPORAL_ADDRESS;
  if (address) {
    return { address, namespace: process.env.TEST_TEMPORAL_NAMESPACE || 'default', close: async () => {} };
  }
  if (!own) {
    const cliPath = process.env.TEMPORAL_CLI_PATH || (await resolveTemporalCli());
    own = { server: startPrivateTemporalDevServer({ cliPath }), users: 0 };
    own.server.catch(() => {
      own = undefined;
    });
  }
  const holder = own;
  const server = await holder.server;
  holder.users++;
  let closed = false;
  return {
    address: server.address,
    namespace: server.namespace,
    async close() {
      if (closed) return;
      closed = true;
      if (--holder.users > 0) return;
      if (own === holder) own = undefined;
      await server.stop();
    },
  };
}
