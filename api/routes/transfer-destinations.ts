import type { EntityManager } from '@mikro-orm/postgresql';
import { PhoneNumber, type TransferDestination } from '../../db/entities/index.js';
import { loadDialingCountries } from '../../lib/accounts.js';
import { destinationRefused } from '../../lib/calls/admit-outbound-call.js';
import { admissionRefusalError } from '../http/admission-errors.js';
import { parameterInvalid } from '../http/errors.js';
import type { ApiContext } from '../http/route.js';

// An agent's transfer destinations, checked beyond their schema before anything is written (POST
// and PATCH /agents): each number as every number the service dials (lib/calls/destination-policy.ts,
// 422 emergency_number or destination_not_allowed), with the workspace's dialing countries as they
// are now and the agent's own numbers (a transfer there rings the agent again); no number twice (400
// parameter_invalid). The first refusal names its field: `transfer_destinations[2].number`. Each
// transfer checks its target again when it is made.

/** A transfer destination of a request body, as the schema passed it. */
export interface TransferDestinationInput {
  number: string;
  description: string;
  mode?: 'cold' | 'warm';
  message?: string | null;
}

export async function transferDestinationsToStore(
  ctx: ApiContext,
  em: EntityManager,
  destinations: readonly TransferDestinationInput[],
  agentId: string | null,
): Promise<TransferDestination[]> {
  if (destinations.length === 0) return [];
  const workspaceId = ctx.state.auth.workspaceId;
  const [dialingCountries, own] = await Promise.all([
    loadDialingCountries(em, workspaceId, ctx.state.deps.settings.dialingCountries),
    agentId
      ? em.find(PhoneNumber, { workspace: workspaceId, agent: agentId }, { fields: ['number'] })
      : Promise.resolve([]),
  ]);
  const rules = {
    dialingCountries,
    ownNumbers: own.map((phoneNumber) => phoneNumber.number),
  };
  const seen = new Set<string>();
  return destinations.map((destination, i) => {
    const param = `transfer_destinations[${i}].number`;
    if (seen.has(destination.number)) {
      throw parameterInvalid(param, `${param}: ${destination.number} is listed twice.`);
    }
    seen.add(destination.number);
    const refusal = destinationRefused(destination.number, rules);
    if (refusal) throw admissionRefusalError({ ...refusal, param });
    return {
      number: destination.number,
      description: destination.description,
      mode: destination.mode ?? 'cold',
      message: destination.message ?? null,
    };
  });
}
