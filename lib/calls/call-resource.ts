import type {
  AnsweredBy,
  Call,
  CallAnalysisData,
  CallChannel,
  CallDirection,
  CallStatus,
  CallTransfer,
} from '../../db/entities/index.js';

/** The Call resource as the API returns it (spec: Resources, Call). */
export interface CallResource {
  object: 'call';
  id: string;
  agent_id: string | null;
  /** The campaign that made the call; null for every other call. */
  campaign_id: string | null;
  direction: CallDirection;
  channel: CallChannel;
  status: CallStatus;
  from: string | null;
  to: string | null;
  started_at: string;
  ended_at: string | null;
  duration_seconds: number | null;
  end_reason: string | null;
  metadata: Record<string, string>;
  has_recording: boolean | null;
  analysis: CallAnalysisData | null;
  /** The transfer tried, and how it went (telephony spec section 1); null: none was. */
  transfer: CallTransfer | null;
  /** Who answered an outbound phone call with voicemail detection (telephony spec section 6); else null. */
  answered_by: AnsweredBy | null;
}

/**
 * Lists leave out what costs a lookup per call: `analysis` and `has_recording` are null there.
 * Elsewhere `hasRecording` is whether the call's recording is in the recordings' store now
 * (lib/recordings/); null when the store could not be asked (RECORDINGS_STORE=s3 and it is down).
 */
export function presentCall(
  call: Call,
  options: { inList: true } | { hasRecording: boolean | null },
): CallResource {
  const inList = 'inList' in options;
  return {
    object: 'call',
    id: call.id,
    agent_id: call.agent ?? null,
    campaign_id: call.campaign ?? null,
    direction: call.direction,
    channel: call.channel,
    status: call.status,
    from: call.fromNumber ?? null,
    to: call.toNumber ?? null,
    started_at: call.startedAt.toISOString(),
    ended_at: call.endedAt ? call.endedAt.toISOString() : null,
    duration_seconds: call.durationSeconds ?? null,
    end_reason: call.endReason ?? null,
    metadata: call.metadata,
    has_recording: inList ? null : options.hasRecording,
    analysis: inList || !call.analysis ? null : presentAnalysis(call.analysis),
    transfer: call.transfer ?? null,
    answered_by: call.answeredBy ?? null,
  };
}

/** Analyses written before analysis plans existed have no plan fields: they show as null. */
function presentAnalysis(analysis: CallAnalysisData): CallAnalysisData {
  return {
    summary: analysis.summary,
    outcome: analysis.outcome,
    sentiment: analysis.sentiment,
    action_items: analysis.action_items,
    data: analysis.data ?? null,
    success: analysis.success ?? null,
    success_reason: analysis.success_reason ?? null,
    created_at: analysis.created_at,
  };
}
