import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { Agent, Call, TestRun, TestRunResult, ToolCall } from '../db/entities/index.js';
import { createInvite, inviteUrl } from '../lib/dashboard/invites.js';
import { closeApiAndDatabase, createFixture, type Fixture, startApi, type TestApi } from './support/api.js';
import { chromiumPath, screenshot } from './support/browser.js';
import { createAgentFixture, createQueuedCall, uniqueNumber } from './support/call-fixtures.js';
import { TEST_PASSWORD } from './support/dashboard-session.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

// The dashboard's agent tools in real headless Chromium against the API (real HTTP, PostgreSQL):
// editing a tool, the API's refusal shown at the field it names, the tools secret shown once, the
// transfer destinations (refused at their field, then saved), the analysis plan (refused at its
// box, then saved), a call's verdict and data, and a call's tool calls in its
// timeline (rows written as the call runtime writes them).

const executablePath = chromiumPath();
const skip = executablePath
  ? false
  : 'no Chromium on this machine (apt-get install -y chromium, or set CHROMIUM_PATH): browser tests skipped';
if (skip) console.log(`# ${skip}`);

let db: TestDatabase;
let api: TestApi;
let owner: Fixture;
let browser: Browser;
let page: Page;

before(
  async () => {
    if (skip) return;
    db = await freshDatabase();
    api = await startApi({
      orm: db.orm,
      // A language model is configured (test runs need one); no worker runs, so it is never asked.
      settings: {
        webhooksAllowPrivateTargets: false,
        voiceLlm: { url: 'http://127.0.0.1:9/v1', apiKey: undefined, model: 'unreached', timeoutMs: 1_000 },
      },
    });
    owner = await createFixture(db.orm, { requestsPerSecond: 10_000, workspaceName: 'Tools' });
    browser = await chromium.launch({ executablePath: executablePath!, args: ['--no-sandbox'] });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(
      inviteUrl(api.url, (await createInvite(db.orm.em.fork(), { userId: owner.userId })).token),
    );
    await page.getByLabel('New password').fill(TEST_PASSWORD);
    await page.getByLabel('Repeat the password').fill(TEST_PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.waitForURL(`${api.url}/agents`);
  },
  { timeout: 120_000 },
);

after(async () => {
  await browser?.close();
  await closeApiAndDatabase(api, db);
});

const storedAgent = (id: string) => db.orm.em.fork().findOneOrFail(Agent, { id });

describe('agent tools in the dashboard', { skip }, () => {
  test('add a tool: the API’s refusal is shown at its field; fixed, it is saved; the tools secret is shown once', async () => {
    const created = await api.client(owner.secret).post('/agents', { name: 'Booker' });
    const agentId = created.body.id;
    await page.goto(`${api.url}/agents/${agentId}`);
    await page.getByRole('heading', { name: 'Tools', exact: true }).waitFor();
    await page.getByText('No tools').waitFor();

    await page.getByRole('button', { name: 'Add tool' }).click();
    const tool = page.locator('fieldset.tool').first();
    await tool.getByLabel('Name').fill('check_availability');
    await tool.getByLabel('URL').fill('https://93.184.215.14/tools/availability');
    await tool.getByLabel('Description').fill('Free slots for a day.');
    const parameters = tool.getByLabel('Parameters (JSON Schema)');
    // Not an object schema: the API refuses it, naming tools[0].parameters.
    await parameters.fill('{"properties": {"date": {"type": "string"}}}');
    await page.getByRole('button', { name: 'Save tools' }).click();
    const refusal = tool.locator('.field-error');
    await refusal.waitFor();
    assert.match((await refusal.textContent()) ?? '', /tools\[0\]\.parameters must be an object schema/);
    assert.equal(await parameters.getAttribute('aria-invalid'), 'true');
    await screenshot(page, 'agent-tools-refused');
    assert.deepEqual((await storedAgent(agentId)).tools, []);

    // Not JSON at all: said at the same field before anything is sent.
    await parameters.fill('{"type": "object",');
    await page.getByRole('button', { name: 'Save tools' }).click();
    await tool.locator('.field-error').getByText('is not JSON').waitFor();

    // A URL the webhook rules refuse: said at the URL.
    await parameters.fill(
      '{"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}',
    );
    await tool.getByLabel('URL').fill('https://10.0.0.7/tools');
    await page.getByRole('button', { name: 'Save tools' }).click();
    await tool.locator('.field-error').getByText('tools[0].url is not allowed').waitFor();

    await tool.getByLabel('URL').fill('https://93.184.215.14/tools/availability');
    await tool.getByLabel('Timeout (seconds)').fill('5');
    await tool.getByLabel('Line while waiting').fill('Let me look that up.');
    await page.getByRole('button', { name: 'Save tools' }).click();
    // The notice comes after the agent was read back, so the save has landed.
    await page.locator('section[aria-labelledby="agent-tools"] .notice').getByText('Tools saved.').waitFor();
    await page.getByRole('button', { name: 'Save tools' }).and(page.locator(':disabled')).waitFor();
    const saved = await storedAgent(agentId);
    assert.deepEqual(saved.tools, [
      {
        name: 'check_availability',
        description: 'Free slots for a day.',
        parameters: { type: 'object', properties: { date: { type: 'string' } }, required: ['date'] },
        url: 'https://93.184.215.14/tools/availability',
        timeoutSeconds: 5,
        speakWhileWaiting: 'Let me look that up.',
      },
    ]);
    assert.equal(await tool.locator('.field-error').count(), 0);

    await page.getByRole('button', { name: 'Make a new secret' }).click();
    const secret = page.getByRole('textbox', { name: 'New tools secret' });
    await secret.waitFor();
    const shown = await secret.inputValue();
    assert.match(shown, /^tsec_[0-9a-f]{64}$/);
    assert.equal((await storedAgent(agentId)).toolsSecret, shown);
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    await screenshot(page, 'agent-tools-saved');

    // Removing the tool saves an empty list.
    await page.reload();
    await page.getByRole('button', { name: 'Remove tool' }).click();
    await page.getByRole('button', { name: 'Save tools' }).click();
    await page.locator('section[aria-labelledby="agent-tools"] .notice').getByText('Tools saved.').waitFor();
    await page.getByText('No tools').waitFor();
    assert.deepEqual((await storedAgent(agentId)).tools, []);
    // The secret is not on the page once it was left.
    assert.equal(await page.getByRole('textbox', { name: 'New tools secret' }).count(), 0);
  });

  test('transfer destinations: a premium-rate number is refused at its field; fixed, they are saved', async () => {
    const created = await api.client(owner.secret).post('/agents', { name: 'Switchboard' });
    const agentId = created.body.id;
    await page.goto(`${api.url}/agents/${agentId}`);
    const section = page.locator('section[aria-labelledby="agent-transfers"]');
    await section.getByText('No destinations').waitFor();
    await section.getByRole('button', { name: 'Add destination' }).click();
    await section.getByRole('button', { name: 'Add destination' }).click();
    const [first, second] = [section.locator('fieldset').nth(0), section.locator('fieldset').nth(1)];
    await first.getByLabel('Number').fill('+4722000200');
    await first.getByLabel('What it is for').fill('Billing');
    // Norway's 820 numbers are premium rate: the API refuses it, naming transfer_destinations[1].number.
    await second.getByLabel('Number').fill('+4782012345');
    await second.getByLabel('What it is for').fill('Front desk');
    await second.getByLabel('Mode', { exact: true }).selectOption('warm');
    await section.getByRole('button', { name: 'Save destinations' }).click();
    const refusal = second.locator('.field-error');
    await refusal.waitFor();
    assert.match((await refusal.textContent()) ?? '', /high-cost number \(premium rate\)/);
    assert.equal(await second.getByLabel('Number').getAttribute('aria-invalid'), 'true');
    assert.equal(await first.locator('.field-error').count(), 0);
    assert.deepEqual((await storedAgent(agentId)).transferDestinations, []);
    await screenshot(page, 'agent-transfers-refused');

    await second.getByLabel('Number').fill('+4722000300');
    await second.getByLabel('Briefing').fill('A caller about an invoice.');
    await section.getByRole('button', { name: 'Save destinations' }).click();
    await section.locator('.notice').getByText('Transfer destinations saved.').waitFor();
    assert.deepEqual((await storedAgent(agentId)).transferDestinations, [
      { number: '+4722000200', description: 'Billing', mode: 'cold', message: null },
      {
        number: '+4722000300',
        description: 'Front desk',
        mode: 'warm',
        message: 'A caller about an invoice.',
      },
    ]);
    // Read back after a reload: the form shows what is stored.
    await page.reload();
    await section.locator('fieldset').nth(1).getByLabel('Number').waitFor();
    assert.equal(
      await section.locator('fieldset').nth(1).getByLabel('Mode', { exact: true }).inputValue(),
      'warm',
    );
    await screenshot(page, 'agent-transfers-saved');
  });

  test('analysis plan: a schema that is not an object schema is refused at its box; fixed, the plan is saved', async () => {
    const created = await api.client(owner.secret).post('/agents', { name: 'Planner' });
    const agentId = created.body.id;
    await page.goto(`${api.url}/agents/${agentId}`);
    const section = page.locator('section[aria-labelledby="agent-analysis-plan"]');
    const schemaBox = section.getByLabel('Data schema');
    await schemaBox.waitFor();
    // Not JSON: named at its box before anything is sent.
    await schemaBox.fill('{"type": "object",');
    await section.getByRole('button', { name: 'Save analysis plan' }).click();
    await section
      .locator('.field-error')
      .getByText(/analysis_plan.data_schema is not JSON/)
      .waitFor();
    // JSON, but not an object schema: the API's refusal, at the same box.
    await schemaBox.fill('{"type": "array"}');
    await section.getByLabel('Success criteria').fill('The caller booked a visit.');
    await section.getByRole('button', { name: 'Save analysis plan' }).click();
    await section
      .locator('.field-error')
      .getByText(/must be an object schema/)
      .waitFor();
    assert.equal(await schemaBox.getAttribute('aria-invalid'), 'true');
    assert.equal(await section.getByLabel('Success criteria').getAttribute('aria-invalid'), null);
    assert.equal((await storedAgent(agentId)).analysisPlan, null);
    await screenshot(page, 'agent-analysis-plan-refused');

    const schema = { type: 'object', properties: { visit_day: { type: 'string' } }, required: ['visit_day'] };
    await schemaBox.fill(JSON.stringify(schema));
    await section.getByRole('button', { name: 'Save analysis plan' }).click();
    await section.locator('.notice').getByText('Analysis plan saved.').waitFor();
    assert.deepEqual((await storedAgent(agentId)).analysisPlan, {
      dataSchema: schema,
      successCriteria: 'The caller booked a visit.',
    });
    await page.reload();
    assert.deepEqual(JSON.parse(await section.getByLabel('Data schema').inputValue()), schema);
  });

  test('answering machines and keypad: leave_message without a message is refused at its box; filled, both are saved; a call shows who answered', async () => {
    const created = await api.client(owner.secret).post('/agents', { name: 'Caller' });
    const agentId = created.body.id;
    await page.goto(`${api.url}/agents/${agentId}`);
    const section = page.locator('section[aria-labelledby="agent-telephone"]');
    await section.getByLabel('When a machine answers').waitFor();
    await section.getByLabel('When a machine answers').selectOption('leave_message');
    await section.getByLabel('The agent may press keys').check();
    await section.getByRole('button', { name: 'Save telephone settings' }).click();
    await section
      .locator('.field-error')
      .getByText(/voicemail.message is required/)
      .waitFor();
    assert.equal(await section.getByLabel('Message for the machine').getAttribute('aria-invalid'), 'true');
    assert.equal((await storedAgent(agentId)).voicemail, null, 'nothing saved');
    await section.getByLabel('Message for the machine').fill('Hi {{name}}, please call Acme back.');
    await section.getByRole('button', { name: 'Save telephone settings' }).click();
    await section.locator('.notice').getByText('Telephone settings saved.').waitFor();
    const stored = await storedAgent(agentId);
    assert.deepEqual(stored.voicemail, {
      detect: true,
      action: 'leave_message',
      message: 'Hi {{name}}, please call Acme back.',
    });
    assert.deepEqual(stored.keypad, { send: true });
    await screenshot(page, 'agent-telephone-saved');

    const fixture = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId });
    const call = await createQueuedCall(db.orm, fixture, { to: uniqueNumber('+4797') });
    await db.orm.em
      .fork()
      .nativeUpdate(
        Call,
        { id: call.id },
        { status: 'completed', endReason: 'voicemail', answeredBy: 'machine' },
      );
    await page.goto(`${api.url}/calls/${call.id}`);
    const facts = page.locator('section[aria-labelledby="call-facts"]');
    await facts.getByText('Answered by').waitFor();
    assert.equal(await facts.locator('.badge-machine').textContent(), 'machine');
  });

  test('a call’s analysis shows the verdict and the plan’s data as a table', async () => {
    const fixture = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId });
    const call = await createQueuedCall(db.orm, fixture, { to: uniqueNumber('+4797') });
    const endedAt = new Date();
    await db.orm.em.fork().nativeUpdate(
      Call,
      { id: call.id },
      {
        status: 'completed',
        endedAt,
        durationSeconds: 30,
        analysis: {
          summary: 'The caller booked a visit.',
          outcome: 'resolved',
          sentiment: 'positive',
          action_items: [],
          data: { visit_day: 'tuesday', party_size: 2, callback_number: null },
          success: true,
          success_reason: 'A day was agreed.',
          created_at: endedAt.toISOString(),
        },
      },
    );
    await page.goto(`${api.url}/calls/${call.id}`);
    const section = page.locator('section[aria-labelledby="call-analysis"]');
    await section.getByText('Success: A day was agreed.').waitFor();
    const rows = await section.getByRole('table', { name: 'Call data' }).locator('tbody tr').allInnerTexts();
    assert.deepEqual(
      rows.map((row) => row.split('\t').map((text) => text.trim())),
      [
        ['visit_day', 'tuesday'],
        ['party_size', '2'],
        ['callback_number', '–'],
      ],
    );
    await screenshot(page, 'call-analysis-plan');
  });

  test('test runs: scenarios typed on the agent page (a refusal at its field, remembered), the run followed to its results with their calls', async () => {
    const fixture = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId, status: 'draft' });
    await page.goto(`${api.url}/agents/${fixture.agentId}`);
    const section = page.locator('section[aria-labelledby="agent-test-runs"]');
    await section.getByText('No test runs yet.').waitFor();
    await section.getByLabel('Scenario name').fill('Books a cleaning');
    await section.locator('[name="scenario-0-caller_prompt"]').fill('You want a cleaning on Tuesday.');
    await section.getByLabel('Success criteria').fill('A Tuesday time was agreed.');
    await section.getByLabel('Caller lines at most').fill('51');
    await section.getByRole('button', { name: 'Run tests' }).click();
    const refusal = section.locator('.field-error');
    await refusal.waitFor();
    assert.match((await refusal.textContent()) ?? '', /max_turns/);
    assert.equal(await db.orm.em.fork().count(TestRun, { agent: fixture.agentId }), 0);

    await section.getByLabel('Caller lines at most').fill('6');
    await section.getByRole('button', { name: 'Run tests' }).click();
    const runView = section.locator('article.test-run');
    await runView.getByText('0 passed, 0 failed, 0 errored').waitFor();
    const [stored] = await db.orm.em.fork().find(TestRun, { agent: fixture.agentId });
    assert.deepEqual(stored!.scenarios, [
      {
        name: 'Books a cleaning',
        callerPrompt: 'You want a cleaning on Tuesday.',
        successCriteria: 'A Tuesday time was agreed.',
        maxTurns: 6,
      },
    ]);
    assert.equal(await runView.locator('tbody tr').count(), 1);

    // The run goes on (as its workflow writes it): the page follows it to its result and call.
    const call = await createQueuedCall(db.orm, fixture, { to: uniqueNumber('+4797') });
    const em = db.orm.em.fork();
    await em.nativeUpdate(
      TestRunResult,
      { testRun: stored!.id },
      { callId: call.id, status: 'passed', reason: 'Tuesday 9:00 was agreed.' },
    );
    await em.nativeUpdate(TestRun, { id: stored!.id }, { status: 'completed', completedAt: new Date() });
    await runView.getByText('1 passed, 0 failed, 0 errored').waitFor({ timeout: 10_000 });
    const row = (await runView.locator('tbody tr').first().allInnerTexts())[0]!;
    assert.match(row, /Books a cleaning\s+1\s+passed\s+Tuesday 9:00 was agreed\.\s+Open call/);
    assert.equal(
      await runView.getByRole('link', { name: 'Open call' }).getAttribute('href'),
      `/calls/${call.id}`,
    );
    await screenshot(page, 'agent-test-runs');

    // The scenarios typed last are remembered in this browser.
    await page.reload();
    assert.equal(await section.getByLabel('Scenario name').inputValue(), 'Books a cleaning');
    assert.equal(await section.getByLabel('Caller lines at most').inputValue(), '6');
  });

  test('a call’s tool calls are in its timeline: name, status, attempts, duration and the result’s start', async () => {
    const fixture = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId });
    const call = await createQueuedCall(db.orm, fixture, { to: uniqueNumber('+4797') });
    const em = db.orm.em.fork();
    const started = new Date(Date.now() - 60_000);
    await em.nativeUpdate(
      Call,
      { id: call.id },
      {
        status: 'completed',
        startedAt: started,
        endedAt: new Date(started.getTime() + 30_000),
        durationSeconds: 30,
      },
    );
    const longResult = JSON.stringify({
      slots: Array.from({ length: 40 }, (_, i) => `2026-12-01T${10 + (i % 10)}:00`),
    });
    for (const [offset, row] of [
      [5_000, { status: 'succeeded', attempts: 2, responseStatus: 200, result: longResult, durationMs: 840 }],
      [
        9_000,
        {
          status: 'refused',
          attempts: 1,
          responseStatus: 404,
          result: '{"error":"tool_refused"}',
          durationMs: 35,
        },
      ],
    ] as const) {
      em.create(ToolCall, {
        id: `tc_${randomBytes(16).toString('hex')}`,
        call: call.id,
        name: 'check_availability',
        arguments: { date: '2026-12-01' },
        ...row,
        afterLineIndex: 0,
        createdAt: new Date(started.getTime() + offset),
      });
    }
    await em.flush();

    await page.goto(`${api.url}/calls/${call.id}`);
    const timeline = page.locator('ol.timeline');
    await timeline.getByText('tool check_availability: succeeded (2 attempts, 840 ms, HTTP 200)').waitFor();
    await timeline.getByText('tool check_availability: refused (1 attempt, 35 ms, HTTP 404)').waitFor();
    const excerpt = (await timeline.locator('li.tool-call code').first().textContent()) ?? '';
    assert.ok(longResult.startsWith(excerpt.replace(/…$/, '')), excerpt);
    assert.ok(excerpt.endsWith('…') && excerpt.length <= 121, excerpt);
    const items = await timeline.locator('li').allInnerTexts();
    assert.match(items[0]!, /placed/);
    assert.match(items[1]!, /succeeded/);
    assert.match(items[2]!, /refused/);
    assert.match(items.at(-1)!, /ended completed/);
    await screenshot(page, 'call-tool-calls');

    // The dashboard route keeps the workspace's rules: another workspace's call is 404.
    const res = await page.evaluate(
      async (id) => (await fetch(`/dashboard/api/calls/${id}/tool-calls`)).status,
      crypto.randomUUID(),
    );
    assert.equal(res, 404);
  });
});
