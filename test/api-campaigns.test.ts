import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { fingerprintOf } from '../api/middleware/idempotency.js';
import { Agent, Event } from '../db/entities/index.js';
import { createPhoneNumber, setLimits } from '../lib/accounts.js';
import { campaignProgressQuery } from '../lib/temporal/campaign-messages.js';
import { CampaignStatusKey, WorkspaceIdKey } from '../lib/temporal/search-attributes.js';
import { campaignWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { verifyWebhookSignature } from '../lib/webhooks/verify-signature.js';
import { createFixture, type Fixture, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { type AgentFixture, createAgentFixture, uniqueNumber } from './support/call-fixtures.js';
import { type CallStack, startCallStack } from './support/call-stack.js';
import type { TestDatabase } from './support/database.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// Campaigns end to end (spec campaigns-v1): real HTTP, PostgreSQL, the Temporal dev server and the
// call workers with the simulator at 1/100 (SIM_TIME_SCALE=0.01). Pacing, windows over days and
// retries after their delays are in test/campaign-workflow.test.ts (time-skipping).

let stack: CallStack;
let db: TestDatabase;
let api: TestApi;
let client: Client;
let owner: Fixture;
let agent: AgentFixture;

let receiver: WebhookReceiver;

before(async () => {
  [stack, receiver] = await Promise.all([
    startCallStack({
      prefix: 'api-campaigns',
      simTimeScale: 0.01,
      webhooks: true,
      settings: { webhooksAllowPrivateTargets: true },
    }),
    startWebhookReceiver(),
  ]);
  ({ db, api, client } = stack);
  owner = await createFixture(db.orm, { requestsPerSecond: 10_000 });
  agent = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId, name: 'Ada' });
});

after(async () => {
  await stack?.close();
  await receiver?.close();
});

const http = (secret = owner.secret) => api.client(secret);
let toSeq = 0;
/** A callee number whose last four digits pick the simulator's scenario. */
const callee = (ending = '5678') => `+4791${String(++toSeq).padStart(3, '0')}${ending}`;

const campaignBody = (overrides: Record<string, unknown> = {}) => ({
  name: 'Spring reminders',
  agent_id: agent.agentId,
  recipients: [{ to: callee() }],
  ...overrides,
});

/** A window that is not open now: two hours from now, for an hour (UTC). */
function closedWindow(now = new Date()) {
  const start = (now.getUTCHours() + 2) % 24;
  const pad = (n: number) => String(n).padStart(2, '0');
  return {
    days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
    start: `${pad(start)}:00`,
    end: `${pad(start)}:59`,
  };
}

/** A campaign that will not call anyone while the test looks at it (its start is a day away). */
async function scheduledCampaign(overrides: Record<string, unknown> = {}) {
  const res = await http().post(
    '/campaigns',
    campaignBody({ schedule: { start_at: new Date(Date.now() + 86_400_000).toISOString() }, ...overrides }),
  );
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.status, 'scheduled');
  return res.body;
}

async function waitForCampaign(id: string, done: (campaign: any) => boolean, secret = owner.secret) {
  let last: any;
  for (let i = 0; i < 600; i++) {
    const res = await http(secret).get(`/campaigns/${id}`);
    last = res.body;
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`campaign ${id} did not get there: ${JSON.stringify(last)}`);
}

describe('a campaign from start to end', () => {
  test('calls every recipient with its campaign_id, at most max_concurrent_calls at a time, then completes', async () => {
    const recipients = [
      { to: callee(), metadata: { first: 'Kari', tier: 'gold' } },
      { to: callee('1001') }, // busy: failed, since retry.on leaves busy out
      { to: callee('2004') }, // hangs up after the greeting: completed
      { to: callee() },
      { to: callee() },
    ];
    const created = await http().post(
      '/campaigns',
      campaignBody({
        recipients,
        max_concurrent_calls: 2,
        retry: { max_attempts: 3, on: ['no_answer'] },
        metadata: { source: 'spring', tier: 'silver' },
        first_message: 'Hi, a quick reminder from the clinic.',
      }),
    );
    assert.equal(created.status, 201, created.text);
    const campaign = created.body;
    assert.equal(campaign.object, 'campaign');
    assert.equal(campaign.status, 'running');
    assert.equal(campaign.paused_reason, null);
    assert.deepEqual(campaign.schedule, { start_at: null, timezone: 'UTC', windows: [] });
    assert.deepEqual(campaign.retry, { max_attempts: 3, delay_minutes: 60, on: ['no_answer'] });
    assert.equal(campaign.max_concurrent_calls, 2);
    assert.equal(campaign.from, null);
    assert.deepEqual(campaign.counts, {
      total: 5,
      pending: 5,
      in_progress: 0,
      completed: 0,
      failed: 0,
      canceled: 0,
    });
    assert.equal(campaign.ended_at, null);

    // Live calls of the campaign, sampled while it runs, never above 2.
    let maxLive = 0;
    const finished = await (async () => {
      for (let i = 0; i < 900; i++) {
        const res = await http().get(`/campaigns/${campaign.id}`);
        maxLive = Math.max(maxLive, res.body.counts.in_progress);
        const calls = await http().get('/calls?limit=100');
        const live = calls.body.data.filter(
          (call: any) => call.campaign_id === campaign.id && !['completed', 'failed'].includes(call.status),
        );
        maxLive = Math.max(maxLive, live.length);
        if (res.body.status === 'completed') return res.body;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.fail('the campaign did not complete');
    })();
    assert.ok(maxLive >= 1 && maxLive <= 2, `live calls at most 2, saw ${maxLive}`);
    assert.deepEqual(finished.counts, {
      total: 5,
      pending: 0,
      in_progress: 0,
      completed: 4,
      failed: 1,
      canceled: 0,
    });
    assert.ok(finished.started_at);
    assert.ok(finished.ended_at);
    assert.ok(Date.parse(finished.ended_at) >= Date.parse(finished.started_at));

    const list = await http().get(`/campaigns/${campaign.id}/recipients`);
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.data.map((r: any) => r.to),
      recipients.map((r) => r.to),
      'in the order given',
    );
    for (const recipient of list.body.data) {
      assert.equal(recipient.object, 'campaign_recipient');
      assert.equal(recipient.attempts, 1);
      assert.equal(recipient.call_ids.length, 1);
      assert.equal(recipient.next_attempt_at, null);
    }
    const busy = list.body.data[1];
    assert.equal(busy.status, 'failed');
    assert.equal(busy.last_end_reason, 'busy');
    assert.equal(list.body.data[2].status, 'completed');
    assert.equal(list.body.data[2].last_end_reason, 'caller_hangup');

    // Each call is an ordinary call with campaign_id, the merged metadata and the campaign's first message.
    const first = await http().get(`/calls/${list.body.data[0].call_ids[0]}`);
    assert.equal(first.body.campaign_id, campaign.id);
    assert.equal(first.body.to, recipients[0].to);
    assert.deepEqual(first.body.metadata, { source: 'spring', tier: 'gold', first: 'Kari' });
    const transcript = await http().get(`/calls/${first.body.id}/transcript`);
    assert.equal(transcript.body.data[0].text, 'Hi, a quick reminder from the clinic.');

    // campaign.completed is written once, with the Campaign as data.
    const events = await db.orm.em
      .fork()
      .find(Event, { workspace: owner.workspaceId, type: 'campaign.completed' });
    const mine = events.filter((event) => JSON.parse(event.body).data.object.id === campaign.id);
    assert.equal(mine.length, 1);
    const envelope = JSON.parse(mine[0].body);
    assert.equal(envelope.type, 'campaign.completed');
    assert.equal(envelope.data.object.status, 'completed');
    assert.equal(envelope.data.object.counts.completed, 4);

    // The workflow: ended, found by its search attributes, with its progress.
    const handle = client.workflow.getHandle(campaignWorkflowId(campaign.id));
    assert.deepEqual(await handle.result(), { status: 'completed' });
    const description = await handle.describe();
    assert.equal(description.typedSearchAttributes.get(WorkspaceIdKey), owner.workspaceId);
    assert.equal(description.typedSearchAttributes.get(CampaignStatusKey), 'completed');
    const progress = await handle.query(campaignProgressQuery);
    assert.equal(progress.step?.status, 'completed');
    assert.equal(progress.step?.counts.completed, 4);

    // Completed: nothing more may happen to it.
    assertApiError(await http().post(`/campaigns/${campaign.id}/pause`), 422, 'campaign_state_invalid');
    assertApiError(await http().post(`/campaigns/${campaign.id}/cancel`), 422, 'campaign_state_invalid');
    assertApiError(
      await http().post(`/campaigns/${campaign.id}/recipients`, { recipients: [{ to: callee() }] }),
      422,
      'campaign_state_invalid',
    );
  });

  test('a call placed with POST /calls has campaign_id null', async () => {
    const res = await http().post('/calls', { agent_id: agent.agentId, to: callee() });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.campaign_id, null);
    const listed = await http().get('/calls?limit=5');
    assert.equal(listed.body.data.find((call: any) => call.id === res.body.id).campaign_id, null);
  });

  test('pause, add recipients, resume; a paused campaign starts nothing new', async () => {
    const created = await http().post(
      '/campaigns',
      campaignBody({ recipients: [{ to: callee() }], max_concurrent_calls: 1 }),
    );
    const id = created.body.id;
    const paused = await http().post(`/campaigns/${id}/pause`);
    assert.equal(paused.status, 200, paused.text);
    assert.equal(paused.body.status, 'paused');
    assert.equal(paused.body.paused_reason, 'requested');
    assertApiError(await http().post(`/campaigns/${id}/pause`), 422, 'campaign_state_invalid');

    const added = await http().post(`/campaigns/${id}/recipients`, {
      recipients: [{ to: callee() }, { to: callee() }],
    });
    assert.equal(added.status, 200, added.text);
    assert.equal(added.body.counts.total, 3);
    assert.equal(added.body.status, 'paused');

    // While paused, the calls already live end, and no more start.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const still = await http().get(`/campaigns/${id}`);
    assert.equal(still.body.status, 'paused');
    assert.ok(still.body.counts.pending >= 2, JSON.stringify(still.body.counts));
    const pending = await http().get(`/campaigns/${id}/recipients?status=pending`);
    for (const recipient of pending.body.data)
      assert.equal(recipient.next_attempt_at, null, 'paused: no next attempt');

    const resumed = await http().post(`/campaigns/${id}/resume`);
    assert.equal(resumed.status, 200);
    assert.equal(resumed.body.status, 'running');
    assert.equal(resumed.body.paused_reason, null);
    assertApiError(await http().post(`/campaigns/${id}/resume`), 422, 'campaign_state_invalid');
    const done = await waitForCampaign(id, (c) => c.status === 'completed');
    assert.equal(done.counts.completed, 3);
  });

  test('cancel: pending recipients canceled, the live call goes on to its end', async () => {
    const created = await http().post(
      '/campaigns',
      campaignBody({
        recipients: [{ to: callee() }, { to: callee() }, { to: callee() }],
        max_concurrent_calls: 1,
      }),
    );
    const id = created.body.id;
    // The first call is live.
    await waitForCampaign(id, (c) => c.counts.in_progress === 1);
    const canceled = await http().post(`/campaigns/${id}/cancel`);
    assert.equal(canceled.status, 200, canceled.text);
    assert.equal(canceled.body.status, 'canceled');
    assert.ok(canceled.body.ended_at);
    assert.equal(canceled.body.counts.canceled, 2);
    assert.equal(canceled.body.counts.in_progress, 1);
    assertApiError(await http().post(`/campaigns/${id}/cancel`), 422, 'campaign_state_invalid');
    assertApiError(await http().post(`/campaigns/${id}/resume`), 422, 'campaign_state_invalid');
    assertApiError(
      await http().post(`/campaigns/${id}/recipients`, { recipients: [{ to: callee() }] }),
      422,
      'campaign_state_invalid',
    );
    const done = await waitForCampaign(id, (c) => c.counts.in_progress === 0);
    assert.equal(done.status, 'canceled');
    assert.deepEqual(done.counts, {
      total: 3,
      pending: 0,
      in_progress: 0,
      completed: 1,
      failed: 0,
      canceled: 2,
    });
    assert.deepEqual(await client.workflow.getHandle(campaignWorkflowId(id)).result(), {
      status: 'canceled',
    });
  });

  test('scheduled: start_at in the future; pause is refused, cancel works', async () => {
    const campaign = await scheduledCampaign();
    assert.equal(campaign.started_at, null);
    const recipients = await http().get(`/campaigns/${campaign.id}/recipients`);
    assert.equal(recipients.body.data[0].next_attempt_at, campaign.schedule.start_at);
    assertApiError(await http().post(`/campaigns/${campaign.id}/pause`), 422, 'campaign_state_invalid');
    assertApiError(await http().post(`/campaigns/${campaign.id}/resume`), 422, 'campaign_state_invalid');
    const added = await http().post(`/campaigns/${campaign.id}/recipients`, {
      recipients: [{ to: callee() }],
    });
    assert.equal(added.status, 200);
    const canceled = await http().post(`/campaigns/${campaign.id}/cancel`);
    assert.equal(canceled.body.status, 'canceled');
    assert.equal(canceled.body.counts.canceled, 2);
    assert.deepEqual(await client.workflow.getHandle(campaignWorkflowId(campaign.id)).result(), {
      status: 'canceled',
    });
  });

  test('outside its windows a running campaign waits: next_attempt_at is the next window start', async () => {
    const window = closedWindow();
    const res = await http().post(
      '/campaigns',
      campaignBody({ schedule: { timezone: 'UTC', windows: [window] } }),
    );
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.status, 'running');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const recipients = await http().get(`/campaigns/${res.body.id}/recipients`);
    const [recipient] = recipients.body.data;
    assert.equal(recipient.status, 'pending');
    assert.equal(recipient.attempts, 0);
    const next = new Date(recipient.next_attempt_at);
    assert.equal(next.getUTCHours(), Number(window.start.slice(0, 2)));
    assert.equal(next.getUTCMinutes(), 0);
    assert.ok(next.getTime() > Date.now());
    const progress = await client.workflow
      .getHandle(campaignWorkflowId(res.body.id))
      .query(campaignProgressQuery);
    assert.equal(progress.step?.waitingFor, 'window');
    assert.equal(progress.step?.wakeAt, next.toISOString());
    await http().post(`/campaigns/${res.body.id}/cancel`);
  });

  test('the minutes quota used up pauses it with quota_exceeded; resume after a raise finishes it', async () => {
    const ws = await createFixture(db.orm, { requestsPerSecond: 10_000 });
    const wsAgent = await createAgentFixture(db.orm, { workspaceId: ws.workspaceId });
    await setLimits(db.orm.em.fork(), { workspaceId: ws.workspaceId, minutesQuota: 0 });
    const res = await http(ws.secret).post('/campaigns', campaignBody({ agent_id: wsAgent.agentId }));
    assert.equal(res.status, 201, res.text);
    const paused = await waitForCampaign(res.body.id, (c) => c.status === 'paused', ws.secret);
    assert.equal(paused.paused_reason, 'quota_exceeded');
    assert.equal(paused.counts.pending, 1);
    await setLimits(db.orm.em.fork(), { workspaceId: ws.workspaceId, minutesQuota: 1000 });
    const resumed = await http(ws.secret).post(`/campaigns/${res.body.id}/resume`);
    assert.equal(resumed.body.status, 'running');
    const done = await waitForCampaign(res.body.id, (c) => c.status === 'completed', ws.secret);
    assert.equal(done.counts.completed, 1);
  });

  test('an agent unpublished before the first call pauses it with agent_unavailable', async () => {
    const ws = await createFixture(db.orm, { requestsPerSecond: 10_000 });
    const wsAgent = await createAgentFixture(db.orm, { workspaceId: ws.workspaceId });
    const res = await http(ws.secret).post(
      '/campaigns',
      campaignBody({
        agent_id: wsAgent.agentId,
        schedule: { start_at: new Date(Date.now() + 1500).toISOString() },
      }),
    );
    assert.equal(res.body.status, 'scheduled');
    const em = db.orm.em.fork();
    await em.nativeUpdate(Agent, { id: wsAgent.agentId }, { status: 'unpublished' });
    const paused = await waitForCampaign(res.body.id, (c) => c.status === 'paused', ws.secret);
    assert.equal(paused.paused_reason, 'agent_unavailable');
    assert.deepEqual(paused.counts, {
      total: 1,
      pending: 1,
      in_progress: 0,
      completed: 0,
      failed: 0,
      canceled: 0,
    });
  });
});

describe('POST /campaigns: refusals', () => {
  const cases: [string, Record<string, unknown>, string, string][] = [
    ['name missing', { name: undefined }, 'parameter_missing', 'name'],
    ['name empty', { name: '' }, 'parameter_invalid', 'name'],
    ['name too long', { name: 'x'.repeat(201) }, 'parameter_invalid', 'name'],
    ['agent_id missing', { agent_id: undefined }, 'parameter_missing', 'agent_id'],
    ['agent_id not a uuid', { agent_id: 'nope' }, 'parameter_invalid', 'agent_id'],
    ['recipients missing', { recipients: undefined }, 'parameter_missing', 'recipients'],
    ['recipients empty', { recipients: [] }, 'parameter_invalid', 'recipients'],
    [
      'a recipient not E.164',
      { recipients: [{ to: '+4790000001' }, { to: '+4790000002' }, { to: '12345' }] },
      'parameter_invalid',
      'recipients[2].to',
    ],
    ['a recipient without to', { recipients: [{ metadata: {} }] }, 'parameter_missing', 'recipients[0].to'],
    [
      'an unknown recipient field',
      { recipients: [{ to: '+4790000001', name: 'x' }] },
      'parameter_unknown',
      'recipients[0].name',
    ],
    [
      'a recipient twice',
      { recipients: [{ to: '+4790000001' }, { to: '+4790000002' }, { to: '+4790000001' }] },
      'parameter_invalid',
      'recipients[2].to',
    ],
    [
      'merged metadata over 20 keys',
      {
        metadata: Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`c${i}`, 'v'])),
        recipients: [
          {
            to: '+4790000001',
            metadata: Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`r${i}`, 'v'])),
          },
        ],
      },
      'parameter_invalid',
      'recipients[0].metadata',
    ],
    ['from not E.164', { from: '555' }, 'parameter_invalid', 'from'],
    ['max_concurrent_calls 0', { max_concurrent_calls: 0 }, 'parameter_invalid', 'max_concurrent_calls'],
    ['max_concurrent_calls 51', { max_concurrent_calls: 51 }, 'parameter_invalid', 'max_concurrent_calls'],
    ['retry.max_attempts 6', { retry: { max_attempts: 6 } }, 'parameter_invalid', 'retry.max_attempts'],
    ['retry.delay_minutes 0', { retry: { delay_minutes: 0 } }, 'parameter_invalid', 'retry.delay_minutes'],
    [
      'retry.delay_minutes 1441',
      { retry: { delay_minutes: 1441 } },
      'parameter_invalid',
      'retry.delay_minutes',
    ],
    ['retry.on empty', { retry: { on: [] } }, 'parameter_invalid', 'retry.on'],
    ['retry.on unknown reason', { retry: { on: ['completed'] } }, 'parameter_invalid', 'retry.on[0]'],
    [
      'schedule.timezone unknown',
      { schedule: { timezone: 'Mars/Olympus' } },
      'parameter_invalid',
      'schedule.timezone',
    ],
    [
      'schedule.start_at not a date-time',
      { schedule: { start_at: 'tomorrow' } },
      'parameter_invalid',
      'schedule.start_at',
    ],
    [
      'a window without days',
      { schedule: { windows: [{ days: [], start: '09:00', end: '17:00' }] } },
      'parameter_invalid',
      'schedule.windows[0].days',
    ],
    [
      'a day twice',
      { schedule: { windows: [{ days: ['mon', 'mon'], start: '09:00', end: '17:00' }] } },
      'parameter_invalid',
      'schedule.windows[0].days',
    ],
    [
      'an unknown day',
      { schedule: { windows: [{ days: ['monday'], start: '09:00', end: '17:00' }] } },
      'parameter_invalid',
      'schedule.windows[0].days[0]',
    ],
    [
      'a start that is no HH:MM',
      { schedule: { windows: [{ days: ['mon'], start: '9:00', end: '17:00' }] } },
      'parameter_invalid',
      'schedule.windows[0].start',
    ],
    [
      'an end at 24:00',
      { schedule: { windows: [{ days: ['mon'], start: '09:00', end: '24:00' }] } },
      'parameter_invalid',
      'schedule.windows[0].end',
    ],
    [
      'an end before the start',
      {
        schedule: {
          windows: [
            { days: ['mon'], start: '09:00', end: '17:00' },
            { days: ['tue'], start: '17:00', end: '09:00' },
          ],
        },
      },
      'parameter_invalid',
      'schedule.windows[1].end',
    ],
    ['an unknown field', { colour: 'blue' }, 'parameter_unknown', 'colour'],
    ['an unknown schedule field', { schedule: { tz: 'UTC' } }, 'parameter_unknown', 'schedule.tz'],
  ];
  for (const [name, overrides, code, param] of cases) {
    test(`400 ${code} ${param}: ${name}`, async () => {
      const body: Record<string, unknown> = { ...campaignBody(), ...overrides };
      for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
      assertApiError(await http().post('/campaigns', body), 400, code, param);
    });
  }

  test('1001 recipients: 400 recipients', async () => {
    const recipients = Array.from({ length: 1001 }, (_, i) => ({ to: `+4792${String(i).padStart(6, '0')}` }));
    assertApiError(
      await http().post('/campaigns', campaignBody({ recipients })),
      400,
      'parameter_invalid',
      'recipients',
    );
  });

  test('404 resource_missing agent_id: no such agent, or another workspace’s', async () => {
    assertApiError(
      await http().post('/campaigns', campaignBody({ agent_id: randomUUID() })),
      404,
      'resource_missing',
      'agent_id',
    );
    const other = await createAgentFixture(db.orm);
    assertApiError(
      await http().post('/campaigns', campaignBody({ agent_id: other.agentId })),
      404,
      'resource_missing',
      'agent_id',
    );
  });

  test('422: the agent checks of POST /calls, then emergency numbers', async () => {
    const draft = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId, status: 'draft' });
    assertApiError(
      await http().post('/campaigns', campaignBody({ agent_id: draft.agentId })),
      422,
      'agent_not_published',
      'agent_id',
    );
    const noNumber = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId, numbers: 0 });
    assertApiError(
      await http().post('/campaigns', campaignBody({ agent_id: noNumber.agentId })),
      422,
      'agent_has_no_number',
      'agent_id',
    );
    const twoNumbers = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId, numbers: 2 });
    assertApiError(
      await http().post('/campaigns', campaignBody({ agent_id: twoNumbers.agentId })),
      422,
      'from_number_required',
      'from',
    );
    const em = db.orm.em.fork();
    const spare = await createPhoneNumber(em, { workspaceId: owner.workspaceId, number: uniqueNumber() });
    await em.flush();
    assertApiError(
      await http().post('/campaigns', campaignBody({ agent_id: twoNumbers.agentId, from: spare.number })),
      422,
      'from_number_not_assigned',
      'from',
    );
    const ok = await http().post(
      '/campaigns',
      campaignBody({
        agent_id: twoNumbers.agentId,
        from: twoNumbers.numbers[1],
        schedule: { start_at: new Date(Date.now() + 86_400_000).toISOString() },
      }),
    );
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.from, twoNumbers.numbers[1]);
    await http().post(`/campaigns/${ok.body.id}/cancel`);

    assertApiError(
      await http().post(
        '/campaigns',
        campaignBody({ recipients: [{ to: callee() }, { to: '+4790000112' }, { to: '+4711200000' }] }),
      ),
      422,
      'emergency_number',
      'recipients[2].to',
    );
    // Where calls may go: a premium-rate number, a country outside the dialing countries.
    for (const refused of ['+4782012345', '+447700900123']) {
      assertApiError(
        await http().post('/campaigns', campaignBody({ recipients: [{ to: callee() }, { to: refused }] })),
        422,
        'destination_not_allowed',
        'recipients[1].to',
      );
    }
  });

  test('Idempotency-Key: the same campaign again; another body 409', async () => {
    const key = `campaign-${randomUUID()}`;
    const body = campaignBody({ schedule: { start_at: new Date(Date.now() + 86_400_000).toISOString() } });
    const first = await http().post('/campaigns', body, { 'Idempotency-Key': key });
    const again = await http().post('/campaigns', body, { 'Idempotency-Key': key });
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.equal(again.body.id, first.body.id);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    const reused = await http().post('/campaigns', { ...body, name: 'Other' }, { 'Idempotency-Key': key });
    assertApiError(reused, 409, 'idempotency_key_reused', 'Idempotency-Key');
    const list = await http().get('/campaigns?limit=100');
    assert.equal(list.body.data.filter((c: any) => c.id === first.body.id).length, 1);
    await http().post(`/campaigns/${first.body.id}/cancel`);
  });

  test('401 without a key; 403 missing_scope with calls:read only, reads allowed', async () => {
    const anonymous = await api.client('').post('/campaigns', campaignBody());
    assert.equal(anonymous.status, 401);
    const reader = await createFixture(db.orm, { workspaceId: owner.workspaceId, scopes: ['calls:read'] });
    assertApiError(await http(reader.secret).post('/campaigns', campaignBody()), 403, 'missing_scope');
    const campaign = await scheduledCampaign();
    assertApiError(await http(reader.secret).post(`/campaigns/${campaign.id}/pause`), 403, 'missing_scope');
    assertApiError(await http(reader.secret).post(`/campaigns/${campaign.id}/cancel`), 403, 'missing_scope');
    assertApiError(
      await http(reader.secret).post(`/campaigns/${campaign.id}/recipients`, {
        recipients: [{ to: callee() }],
      }),
      403,
      'missing_scope',
    );
    assert.equal((await http(reader.secret).get(`/campaigns/${campaign.id}`)).status, 200);
    assert.equal((await http(reader.secret).get('/campaigns')).status, 200);
    assert.equal((await http(reader.secret).get(`/campaigns/${campaign.id}/recipients`)).status, 200);
    const agentsOnly = await createFixture(db.orm, {
      workspaceId: owner.workspaceId,
      scopes: ['agents:read'],
    });
    assertApiError(await http(agentsOnly.secret).get('/campaigns'), 403, 'missing_scope');
    await http().post(`/campaigns/${campaign.id}/cancel`);
  });
});

test('Idempotency-Key: while another request holds the key, 409 idempotency_request_in_progress and no campaign', async () => {
  // Another request of this key is under way (an API process working on it, or one killed
  // mid-request whose claim has not run out): its claim, as the middleware writes it.
  const key = `campaign-${randomUUID()}`;
  const body = campaignBody({ name: `held ${key}` });
  await db.orm.em.getConnection().execute(
    `insert into idempotency_records
       (id, workspace_id, key, endpoint, fingerprint, state, locked_until, created_at, expires_at)
     values (?, ?, ?, 'POST /v1/campaigns', ?, 'in_progress', now() + interval '60 seconds', now(), now() + interval '1 day')`,
    [randomUUID(), owner.workspaceId, key, fingerprintOf({}, JSON.stringify(body))],
  );
  const held = await http().post('/campaigns', body, { 'Idempotency-Key': key });
  assertApiError(held, 409, 'idempotency_request_in_progress', 'Idempotency-Key');
  const list = await http().get('/campaigns?limit=100');
  assert.equal(list.body.data.filter((c: any) => c.name === `held ${key}`).length, 0);
});

describe('reading and changing campaigns', () => {
  test('404 for an unknown campaign or another workspace’s; 400 for an id that is no uuid', async () => {
    const campaign = await scheduledCampaign();
    const stranger = await createFixture(db.orm, { requestsPerSecond: 10_000 });
    for (const path of ['', '/recipients']) {
      assertApiError(
        await http(stranger.secret).get(`/campaigns/${campaign.id}${path}`),
        404,
        'resource_missing',
        'campaign_id',
      );
      assertApiError(
        await http().get(`/campaigns/${randomUUID()}${path}`),
        404,
        'resource_missing',
        'campaign_id',
      );
      assertApiError(await http().get(`/campaigns/nope${path}`), 400, 'parameter_invalid', 'campaign_id');
    }
    for (const move of ['pause', 'resume', 'cancel']) {
      assertApiError(
        await http(stranger.secret).post(`/campaigns/${campaign.id}/${move}`),
        404,
        'resource_missing',
        'campaign_id',
      );
      assertApiError(await http().post(`/campaigns/nope/${move}`), 400, 'parameter_invalid', 'campaign_id');
    }
    assertApiError(
      await http(stranger.secret).post(`/campaigns/${campaign.id}/recipients`, {
        recipients: [{ to: callee() }],
      }),
      404,
      'resource_missing',
      'campaign_id',
    );
    const strangerList = await http(stranger.secret).get('/campaigns');
    assert.deepEqual(strangerList.body.data, []);
    await http().post(`/campaigns/${campaign.id}/cancel`);
  });

  test('GET /campaigns: newest first, status filter, pagination, bad queries', async () => {
    const a = await scheduledCampaign({ name: 'A' });
    const b = await scheduledCampaign({ name: 'B' });
    await http().post(`/campaigns/${a.id}/cancel`);
    const page = await http().get('/campaigns?limit=1');
    assert.equal(page.status, 200);
    assert.equal(page.body.object, 'list');
    assert.equal(page.body.data[0].id, b.id);
    assert.equal(page.body.has_more, true);
    const next = await http().get(`/campaigns?limit=1&cursor=${page.body.next_cursor}`);
    assert.equal(next.body.data[0].id, a.id);
    const scheduled = await http().get('/campaigns?status=scheduled&limit=100');
    assert.ok(scheduled.body.data.some((c: any) => c.id === b.id));
    assert.ok(scheduled.body.data.every((c: any) => c.status === 'scheduled'));
    const canceled = await http().get('/campaigns?status=canceled&limit=100');
    assert.ok(canceled.body.data.some((c: any) => c.id === a.id));
    assertApiError(await http().get('/campaigns?status=done'), 400, 'parameter_invalid', 'status');
    assertApiError(await http().get('/campaigns?limit=0'), 400, 'parameter_invalid', 'limit');
    assertApiError(await http().get('/campaigns?cursor=xyz'), 400, 'parameter_invalid', 'cursor');
    assertApiError(await http().get('/campaigns?colour=blue'), 400, 'parameter_unknown', 'colour');
    await http().post(`/campaigns/${b.id}/cancel`);
  });

  test('recipients: in the order given across pages and added batches, status filter, bad queries', async () => {
    const first = Array.from({ length: 5 }, () => ({ to: callee() }));
    const campaign = await scheduledCampaign({ recipients: first });
    const more = Array.from({ length: 3 }, () => ({ to: callee() }));
    const added = await http().post(`/campaigns/${campaign.id}/recipients`, { recipients: more });
    assert.equal(added.body.counts.total, 8);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await http().get(
        `/campaigns/${campaign.id}/recipients?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      assert.equal(res.status, 200, res.text);
      seen.push(...res.body.data.map((r: any) => r.to));
      cursor = res.body.next_cursor;
    } while (cursor);
    assert.deepEqual(
      seen,
      [...first, ...more].map((r) => r.to),
    );
    const pending = await http().get(`/campaigns/${campaign.id}/recipients?status=pending&limit=100`);
    assert.equal(pending.body.data.length, 8);
    const none = await http().get(`/campaigns/${campaign.id}/recipients?status=completed`);
    assert.deepEqual(none.body.data, []);
    assertApiError(
      await http().get(`/campaigns/${campaign.id}/recipients?status=done`),
      400,
      'parameter_invalid',
      'status',
    );
    assertApiError(
      await http().get(`/campaigns/${campaign.id}/recipients?limit=101`),
      400,
      'parameter_invalid',
      'limit',
    );
    await http().post(`/campaigns/${campaign.id}/cancel`);
  });

  test('POST …/recipients: 400s, emergency 422, duplicates of those already in', async () => {
    const campaign = await scheduledCampaign({ recipients: [{ to: '+4793000001' }] });
    const path = `/campaigns/${campaign.id}/recipients`;
    assertApiError(await http().post(path, {}), 400, 'parameter_missing', 'recipients');
    assertApiError(await http().post(path, { recipients: [] }), 400, 'parameter_invalid', 'recipients');
    assertApiError(
      await http().post(path, { recipients: [{ to: 'x' }] }),
      400,
      'parameter_invalid',
      'recipients[0].to',
    );
    assertApiError(
      await http().post(path, { recipients: [{ to: '+4793000002' }, { to: '+4793000001' }] }),
      400,
      'parameter_invalid',
      'recipients[1].to',
    );
    assertApiError(
      await http().post(path, { recipients: [{ to: '+4793000003' }], x: 1 }),
      400,
      'parameter_unknown',
      'x',
    );
    assertApiError(
      await http().post(path, { recipients: [{ to: '+4793000004' }, { to: '+19110000000' }] }),
      422,
      'emergency_number',
      'recipients[1].to',
    );
    assertApiError(
      await http().post(path, { recipients: [{ to: '+4793000005' }, { to: '+19005551234' }] }),
      422,
      'destination_not_allowed',
      'recipients[1].to',
    );
    const still = await http().get(`/campaigns/${campaign.id}`);
    assert.equal(still.body.counts.total, 1, 'a refused request adds nobody');
    await http().post(`/campaigns/${campaign.id}/cancel`);
  });

  test('100,000 recipients at most: one more is 422 campaign_recipient_limit', async () => {
    const campaign = await scheduledCampaign({ recipients: [{ to: '+4794000000' }] });
    // 99,998 more straight into the table (positions 1 to 99,998), as 100 POSTs would add them.
    await db.orm.em
      .fork()
      .getConnection()
      .execute(
        `insert into campaign_recipients (id, campaign_id, position, to_number, metadata, status, attempts, call_ids, created_at)
         select gen_random_uuid(), ?, n, '+4795' || lpad(n::text, 8, '0'), '{}', 'pending', 0, '[]', now()
           from generate_series(1, 99998) as n`,
        [campaign.id],
      );
    const path = `/campaigns/${campaign.id}/recipients`;
    assertApiError(
      await http().post(path, { recipients: [{ to: '+4796000001' }, { to: '+4796000002' }] }),
      422,
      'campaign_recipient_limit',
      'recipients',
    );
    const last = await http().post(path, { recipients: [{ to: '+4796000001' }] });
    assert.equal(last.status, 200, last.text);
    assert.equal(last.body.counts.total, 100_000);
    const page = await http().get(`/campaigns/${campaign.id}/recipients?limit=100&status=pending`);
    assert.equal(page.body.data[0].to, '+4794000000', 'the order given');
    await http().post(`/campaigns/${campaign.id}/cancel`);
  });

  test('campaign.completed reaches a subscribed webhook endpoint, signed, with the Campaign as data', async () => {
    const ws = await createFixture(db.orm, { requestsPerSecond: 10_000 });
    const wsAgent = await createAgentFixture(db.orm, { workspaceId: ws.workspaceId });
    const endpoint = await http(ws.secret).post('/webhooks', {
      url: `${receiver.url}/campaigns`,
      events: ['campaign.completed'],
    });
    assert.equal(endpoint.status, 201, endpoint.text);
    assert.deepEqual(endpoint.body.events, ['campaign.completed']);
    const created = await http(ws.secret).post('/campaigns', campaignBody({ agent_id: wsAgent.agentId }));
    assert.equal(created.status, 201, created.text);
    const deadline = Date.now() + 60_000;
    while (!receiver.requests.some((r) => r.path === '/campaigns') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const [delivery, ...more] = receiver.requests.filter((r) => r.path === '/campaigns');
    assert.ok(delivery, 'campaign.completed delivered');
    assert.equal(more.length, 0, 'once');
    assert.ok(
      verifyWebhookSignature({
        rawBody: delivery.rawBody,
        signatureHeader: delivery.headers['service-signature'] as string,
        secret: endpoint.body.secret,
      }).ok,
    );
    const event = JSON.parse(delivery.rawBody.toString('utf8'));
    assert.equal(event.type, 'campaign.completed');
    assert.equal(delivery.headers['service-event-type'], 'campaign.completed');
    const fetched = await http(ws.secret).get(`/campaigns/${created.body.id}`);
    assert.deepEqual(event.data.object, fetched.body, 'data.object is the Campaign as GET shows it');
  });

  test('the OpenAPI document lists the campaign routes and campaign_id on Call', async () => {
    const doc = await http().get('/openapi.json');
    for (const path of [
      '/campaigns',
      '/campaigns/{campaign_id}',
      '/campaigns/{campaign_id}/recipients',
      '/campaigns/{campaign_id}/pause',
    ]) {
      assert.ok(doc.body.paths[path], path);
    }
    const text = JSON.stringify(doc.body);
    assert.match(text, /"campaign_id"/);
  });
});
