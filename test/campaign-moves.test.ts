import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Campaign, CampaignStatus } from '../db/entities/index.js';
import {
  type CampaignMove,
  campaignMoveRefusal,
  pauseCampaign,
  resumeCampaign,
  startCampaign,
} from '../lib/campaigns/campaign-moves.js';

// A campaign's state machine (lib/campaigns/campaign-moves.ts), every move from every status.
// The moves through the API and the workflow run in api-campaigns.test.ts and
// campaign-workflow.test.ts.

const STATUSES: CampaignStatus[] = ['scheduled', 'running', 'paused', 'completed', 'canceled'];
const ALLOWED: Record<CampaignMove, CampaignStatus[]> = {
  start: ['scheduled'],
  pause: ['running'],
  resume: ['paused'],
  cancel: ['scheduled', 'running', 'paused'],
  add_recipients: ['scheduled', 'running', 'paused'],
  complete: ['running'],
};

const campaignIn = (status: CampaignStatus) => ({ status, pausedReason: null }) as unknown as Campaign;

describe('campaignMoveRefusal', () => {
  for (const [move, allowed] of Object.entries(ALLOWED) as [CampaignMove, CampaignStatus[]][]) {
    test(`${move}: allowed from ${allowed.join(', ')} only`, () => {
      for (const status of STATUSES) {
        const refusal = campaignMoveRefusal(campaignIn(status), move);
        if (allowed.includes(status)) assert.equal(refusal, null, `${move} from ${status}`);
        else assert.equal(refusal?.code, 'campaign_state_invalid', `${move} from ${status}`);
      }
    });
  }

  test('the refusal names the status and the move', () => {
    assert.equal(
      campaignMoveRefusal(campaignIn('completed'), 'add_recipients')?.message,
      'A completed campaign cannot be given more recipients.',
    );
  });
});

describe('the moves', () => {
  test('start, pause with its reason, resume', () => {
    const campaign = campaignIn('scheduled');
    assert.equal(startCampaign(campaign), null);
    assert.equal(campaign.status, 'running');
    assert.equal(pauseCampaign(campaign, 'quota_exceeded'), null);
    assert.deepEqual([campaign.status, campaign.pausedReason], ['paused', 'quota_exceeded']);
    assert.equal(resumeCampaign(campaign), null);
    assert.deepEqual([campaign.status, campaign.pausedReason], ['running', null]);
  });

  test('a refused move changes nothing', () => {
    const campaign = campaignIn('canceled');
    assert.ok(pauseCampaign(campaign, 'requested'));
    assert.deepEqual([campaign.status, campaign.pausedReason], ['canceled', null]);
  });
});
