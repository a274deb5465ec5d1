import type { AdmissionRefusal, AgentRefusal } from '../../lib/calls/admit-outbound-call.js';
import type { WorkspaceRefusal } from '../../lib/calls/admit-to-workspace.js';
import {
  type ApiError,
  agentHasNoNumber,
  agentNotPublished,
  callDailyLimit,
  callRateLimited,
  callRejected,
  destinationNotAllowed,
  emergencyNumber,
  fromNumberNotAssigned,
  fromNumberRequired,
  quotaExceeded,
  resourceMissing,
} from './errors.js';

// The spec's error for each refusal of a call's admission (lib/calls/admit-outbound-call.ts and the
// workspace's, lib/calls/admit-to-workspace.ts), for every route that admits calls or checks an
// agent that will place them (POST /calls, campaigns, the dashboard's test panel).

/** The spec's error for an agent that cannot place calls (as asked). */
export function agentRefusalError(refusal: AgentRefusal): ApiError {
  switch (refusal.code) {
    case 'agent_missing':
      return resourceMissing('agent', 'agent_id');
    case 'agent_not_published':
      return agentNotPublished();
    case 'agent_has_no_number':
      return agentHasNoNumber();
    case 'from_number_not_assigned':
      return fromNumberNotAssigned();
    case 'from_number_required':
      return fromNumberRequired();
  }
}

/** The spec's error for the workspace's refusal of a call: POST /calls and the test panel alike. */
export function workspaceRefusalError(refusal: WorkspaceRefusal): ApiError {
  switch (refusal.code) {
    case 'call_rate_limited':
      return callRateLimited(refusal.retryAfterSeconds);
    case 'call_daily_limit':
      return callDailyLimit(refusal.retryAfterSeconds);
    case 'quota_exceeded':
      return quotaExceeded(refusal.retryAfterSeconds);
    case 'trial_line_busy':
      return callRejected('The free trial allows one call at a time; retry when the current call has ended.');
  }
}

/** The spec's error for each refusal of admitOutboundCall. */
export function admissionRefusalError(refusal: AdmissionRefusal): ApiError {
  switch (refusal.code) {
    case 'emergency_number':
      return emergencyNumber(refusal.param);
    case 'destination_not_allowed':
      return destinationNotAllowed(refusal.message, refusal.param);
    case 'call_rate_limited':
    case 'call_daily_limit':
    case 'quota_exceeded':
    case 'trial_line_busy':
      return workspaceRefusalError(refusal);
    default:
      return agentRefusalError(refusal);
  }
}
