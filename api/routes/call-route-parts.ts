import type { EntityManager } from '@mikro-orm/postgresql';
import { Call } from '../../db/entities/index.js';
import { resourceMissing } from '../http/errors.js';
import { uuidParams } from '../schemas/common.js';

// What the call routes (calls.ts, call-recordings.ts) share.

export const callParams = uuidParams('call_id');

/** The call of the key's workspace, or 404 resource_missing (call_id). */
export async function findCallOr404(em: EntityManager, workspaceId: string, callId: string): Promise<Call> {
  const call = await em.findOne(Call, { id: callId, workspace: workspaceId });
  if (!call) throw resourceMissing('call', 'call_id');
  return call;
}
