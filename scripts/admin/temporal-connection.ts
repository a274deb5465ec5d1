import { Client, Connection } from '@temporalio/client';
import { OperatorError } from '../../lib/accounts.js';
import { temporalConnectionOptions } from '../../lib/temporal-connection.js';
import type { CommandContext } from './command.js';

/** How long a command waits for the Temporal frontend before it gives up. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * A Temporal client for commands that start workflows (the simulator's calls), on the same
 * server the service uses: TEMPORAL_ADDRESS, else the dev server `npm start` runs. Closed when
 * the CLI exits; an unreachable server is a one-line refusal.
 */
export async function connectTemporal(context: CommandContext): Promise<Client> {
  const { temporalAddress, temporalAddressIsDefault, temporalNamespace } = context.settings;
  let connection: Connection;
  try {
    connection = await Connection.connect({
      ...temporalConnectionOptions(context.settings),
      connectTimeout: CONNECT_TIMEOUT_MS,
    });
  } catch (error) {
    const hint = temporalAddressIsDefault
      ? 'start the service with `npm start` (it runs the local dev server) or set TEMPORAL_ADDRESS'
      : 'check TEMPORAL_ADDRESS';
    throw new OperatorError(
      `Temporal is not reachable at ${temporalAddress} (${error instanceof Error ? error.message : error}); ${hint}`,
    );
  }
  context.onClose(() => connection.close());
  return new Client({ connection, namespace: temporalNamespace });
}
