import type { EntityManager } from '@mikro-orm/postgresql';
import { Call, type CallEventType } from '../../db/entities/index.js';
import { buildEventEnvelope } from '../events/event-envelope.js';
import { callDuration, callsEnded, callsStarted } from '../metrics/service-metrics.js';
import { hasRecordingIfKnown, type RecordingStore } from '../recordings/recording-store.js';
import { presentCall } from './call-resource.js';

/** Fields of a call event's `data` beside `object` (`reason` of call.failed, `transferred_to` of call.transferred). */
export type CallEventExtra = { reason?: string; transferred_to?: string };

/**
 * Writes a call's event of `type` once: the envelope's JSON bytes are stored as they will be sent,
 * with the Call as GET /calls/{id} shows it now. A second write of the same (call, type), from a
 * retried activity or a replayed workflow, keeps the first row and returns its id.
 */
export async function writeCallEventOnce(
  em: EntityManager,
  input: { callId: string; type: CallEventType; occurredAt: Date; extra?: CallEventExtra },
  recordings: Pick<RecordingStore, 'has'>,
): Promise<string> {
  const call = await em.findOneOrFail(Call, { id: input.callId });
  const recorded = await hasRecordingIfKnown(recordings, call.id);
  const { id, body } = buildEventEnvelope({
    type: input.type,
    occurredAt: input.occurredAt,
    data: { object: presentCall(call, { hasRecording: recorded }), ...input.extra },
  });
  const connection = em.getConnection();
  const inserted = await connection.execute<{ id: string }[]>(
    `insert into events (id, workspace_id, type, api_version, call_id, body, created_at)
     values (?, ?, ?, 'v1', ?, ?, ?)
     on conflict (call_id, type) do nothing
     returning id`,
    [id, call.workspace, input.type, call.id, body, input.occurredAt],
  );
  if (inserted.length > 0) {
    countCall(call, input.type);
    return inserted[0].id;
  }
  const [existing] = await connection.execute<{ id: string }[]>(
    'select id from events where call_id = ? and type = ?',
    [call.id, input.type],
  );
  return existing.id;
}

/** The call's metrics, once per event (the insert above happens once): started, or ended and how long. */
function countCall(call: Call, type: CallEventType): void {
  const { direction, channel } = call;
  if (type === 'call.started') {
    callsStarted.inc({ direction, channel });
    return;
  }
  callsEnded.inc({ direction, channel, status: call.status, end_reason: call.endReason ?? 'none' });
  if (call.answeredAt && typeof call.durationSeconds === 'number') {
    callDuration.observe({ direction, channel }, call.durationSeconds);
  }
}
