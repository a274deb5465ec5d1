import type { WorkspaceRefusal } from '../lib/calls/admit-to-workspace.js';
import { type ApiError, callDailyLimit, callRateLimited, callRejected, quotaExceeded } from './errors.js';

// The workspace admission's refusals (lib/calls/admit-to-workspace.ts) as the spec's errors, for
// every route that places a call: POST /calls and the dashboard's test panel.

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
