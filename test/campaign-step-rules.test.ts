import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CampaignRetry, CampaignStatus } from '../db/entities/index.js';
import { refusalEffect } from '../lib/campaigns/advance-campaign.js';
import { recipientOutcome } from '../lib/campaigns/settle-recipients.js';

// The decisions of a campaign's step (lib/campaigns/), each on its own; the step as a whole runs
// against PostgreSQL and Temporal in campaign-workflow.test.ts.

const retry: CampaignRetry = { max_attempts: 2, delay_minutes: 60, on: ['no_answer', 'busy'] };
const campaign = (status: CampaignStatus = 'running') => ({ status, retry });
const endedAt = new Date('2026-11-25T10:00:00Z');

describe('recipientOutcome', () => {
  test('a completed call completes the recipient', () => {
    const call = { attempts: 1, callStatus: 'completed', endReason: 'hang_up', endedAt };
    assert.deepEqual(recipientOutcome(campaign(), call), {
      status: 'completed',
      reason: 'hang_up',
      retryAt: null,
    });
  });

  test('an end retried on, with attempts left, is pending again after the delay', () => {
    const call = { attempts: 1, callStatus: 'no_answer', endReason: null, endedAt };
    assert.deepEqual(recipientOutcome(campaign(), call), {
      status: 'pending',
      reason: 'no_answer',
      retryAt: new Date('2026-11-25T11:00:00Z'),
    });
  });

  test('the last attempt, or an end not retried on, fails the recipient', () => {
    const last = { attempts: 2, callStatus: 'busy', endReason: null, endedAt };
    assert.equal(recipientOutcome(campaign(), last).status, 'failed');
    const other = { attempts: 1, callStatus: 'failed', endReason: 'not_connected', endedAt };
    assert.deepEqual(recipientOutcome(campaign(), other), {
      status: 'failed',
      reason: 'not_connected',
      retryAt: null,
    });
  });

  test('a call an answering machine took did not reach the recipient: retried like no_answer', () => {
    const machine = { attempts: 1, callStatus: 'completed', endReason: 'voicemail', endedAt };
    assert.deepEqual(recipientOutcome(campaign(), machine), {
      status: 'pending',
      reason: 'voicemail',
      retryAt: new Date('2026-11-25T11:00:00Z'),
    });
    assert.deepEqual(recipientOutcome(campaign(), { ...machine, attempts: 2 }), {
      status: 'failed',
      reason: 'voicemail',
      retryAt: null,
    });
    const busyOnly = { status: 'running' as const, retry: { ...retry, on: ['busy' as const] } };
    assert.equal(recipientOutcome(busyOnly, machine).status, 'failed', 'not retried when no_answer is not');
  });

  test('in a canceled campaign, a retry that will never come cancels the recipient', () => {
    const call = { attempts: 1, callStatus: 'busy', endReason: null, endedAt };
    assert.deepEqual(recipientOutcome(campaign('canceled'), call), {
      status: 'canceled',
      reason: 'busy',
      retryAt: null,
    });
  });
});

describe('refusalEffect', () => {
  const at = new Date('2026-11-25T10:00:00Z');
  const windowed = (when: Date) => new Date(when.getTime() + 1_000);

  test('a call limit is waited out, then a window', () => {
    assert.deepEqual(
      refusalEffect({ code: 'call_rate_limited', retryAfterSeconds: 1.2 }, at, false, windowed),
      {
        kind: 'wait',
        wakeAt: new Date(at.getTime() + 1_200 + 1_000),
        waitingFor: 'call_rate_limited',
      },
    );
  });

  test("the trial line: the campaign's own call signals its end, another's is looked at later", () => {
    const busy = { code: 'trial_line_busy' } as const;
    assert.deepEqual(refusalEffect(busy, at, true, windowed), {
      kind: 'wait',
      wakeAt: null,
      waitingFor: 'trial_line',
    });
    assert.deepEqual(refusalEffect(busy, at, false, windowed), {
      kind: 'wait',
      wakeAt: new Date(at.getTime() + 30_000),
      waitingFor: 'trial_line',
    });
  });

  test('the quota or an agent that cannot call pauses; an emergency number fails its recipient', () => {
    const quota = { code: 'quota_exceeded', retryAfterSeconds: 60 } as const;
    assert.deepEqual(refusalEffect(quota, at, false, windowed), { kind: 'pause', reason: 'quota_exceeded' });
    assert.deepEqual(refusalEffect({ code: 'agent_not_published' }, at, false, windowed), {
      kind: 'pause',
      reason: 'agent_unavailable',
    });
    assert.deepEqual(
      refusalEffect({ code: 'destination_not_allowed', message: 'high-cost' }, at, false, windowed),
      { kind: 'fail_recipient' },
    );
    assert.deepEqual(refusalEffect({ code: 'emergency_number' }, at, false, windowed), {
      kind: 'fail_recipient',
    });
  });
});
