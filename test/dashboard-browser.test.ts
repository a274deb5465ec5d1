import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { createPhoneNumber } from '../lib/accounts.js';
import { createInvite, inviteUrl } from '../lib/dashboard/invites.js';
import { RecordingWriter } from '../lib/recordings/recording-writer.js';
import { createFixture, type Fixture } from './support/api.js';
import { chromiumPath, screenshot } from './support/browser.js';
import { type CallStack, startCallStack } from './support/call-stack.js';
import { TEST_PASSWORD } from './support/dashboard-session.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// The dashboard in real headless Chromium against the whole stack (real HTTP, PostgreSQL, the
// Temporal dev server, the call, simulator and webhooks workers): every step a new user takes,
// from the invite link to watching a test call in Calls. Screenshots of each page go to
// .data/screenshots.

// Code run inside the page by page.evaluate() sees the browser's globals; this file is compiled
// for Node, so they are declared here, loosely.
declare const document: {
  documentElement: { scrollWidth: number };
  querySelector(s: string): { hasAttribute(name: string): boolean; duration?: number } | null;
  querySelectorAll(s: string): { length: number };
  activeElement: { textContent: string | null } | null;
};
declare const window: { innerWidth: number };
type ErrorAnswer = { error: { code: string } };

const executablePath = chromiumPath();
const skip = executablePath
  ? false
  : 'no Chromium on this machine (apt-get install -y chromium, or set CHROMIUM_PATH): browser tests skipped';
if (skip) console.log(`# ${skip}`);

let stack: CallStack;
let receiver: WebhookReceiver;
let browser: Browser;
let owner: Fixture;
let ownerEmail: string;
let ownerContext: BrowserContext;
let page: Page;
let agentId: string;
let testCallId: string;
const pageErrors: string[] = [];

const recordingsDir = await mkdtemp(path.join(tmpdir(), 'dashboard-recordings-'));

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

before(
  async () => {
    if (skip) return;
    stack = await startCallStack({
      prefix: 'dashboard',
      webhooks: true,
      settings: { webhooksAllowPrivateTargets: true, recordingsDir },
    });
    receiver = await startWebhookReceiver();
    owner = await createFixture(stack.db.orm, { requestsPerSecond: 10_000, workspaceName: 'Acme' });
    ownerEmail = await emailOf(owner.userId);
    await createPhoneNumber(stack.db.orm.em.fork(), {
      workspaceId: owner.workspaceId,
      number: '+4790000001',
      label: 'Support line',
    });
    browser = await chromium.launch({ executablePath: executablePath!, args: ['--no-sandbox'] });
    ownerContext = await browser.newContext({ viewport: DESKTOP });
    page = await ownerContext.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
  },
  { timeout: 120_000 },
);

after(async () => {
  await browser?.close();
  await receiver?.close();
  await stack?.close();
  await rm(recordingsDir, { recursive: true, force: true });
});

const url = (path: string) => `${stack.api.url}${path}`;
const key = () => stack.api.client(owner.secret);

async function emailOf(userId: string): Promise<string> {
  const rows = await stack.db.orm.em
    .getConnection()
    .execute<{ email: string }[]>('select email from users where id = ?', [userId], 'all');
  return rows[0]!.email;
}

async function inviteLink(userId: string): Promise<string> {
  return inviteUrl(stack.api.url, (await createInvite(stack.db.orm.em.fork(), { userId })).token);
}

/** Polls `check` (10 s at most): for a change the page made, seen through the API. */
async function eventually(check: () => Promise<boolean>) {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail('the change did not arrive within 10 s');
}

/** A link of the top navigation. */
const nav = (p: Page, name: string) =>
  p.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });

/** Every "Loading…" of the page is gone. */
const loaded = (p: Page) => p.waitForFunction(() => !document.querySelector('.loading'));

/** The page has no horizontal scroll: nothing sticks out of the viewport. */
async function assertNoHorizontalOverflow(p: Page, what: string) {
  const { scroll, width } = await p.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    width: window.innerWidth,
  }));
  assert.ok(scroll <= width, `${what}: the page is ${scroll}px wide in a ${width}px viewport`);
}

describe('the dashboard in Chromium', { skip }, () => {
  test('invite link → set password → signed in; sign out; sign in with the password', async () => {
    await page.goto(await inviteLink(owner.userId));
    await page.getByRole('heading', { name: 'Set your password' }).waitFor();
    await page.getByLabel('New password').fill(TEST_PASSWORD);
    await page.getByLabel('Repeat the password').fill(TEST_PASSWORD);
    await screenshot(page, '01-invite');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.waitForURL(url('/agents'));
    await page.getByRole('heading', { name: 'Agents', exact: true }).waitFor();
    await page.getByText('No agents yet').waitFor();
    // The footer leads to the API reference the server itself serves (api/api-reference.ts).
    assert.equal(await page.getByRole('link', { name: 'API reference' }).getAttribute('href'), '/docs');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(url('/sign-in'));
    await page.getByLabel('Email').fill(ownerEmail);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('The email or the password is wrong.').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /request_id req_/);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    await screenshot(page, '02-sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(url('/agents'));
    await page.getByText('Acme · owner').waitFor();
  });

  test('create, edit (voice from the picker) and publish an agent', async () => {
    await page.getByText('New agent').click();
    await page.getByLabel('Name').fill('Support');
    await page.getByLabel('System prompt').fill('You help customers of Acme with their orders.');
    await page.getByLabel('First message').fill('Hi, this is Acme support.');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.waitForURL(/\/agents\/[0-9a-f-]{36}$/);
    agentId = page.url().split('/').at(-1)!;
    await page.getByRole('heading', { name: 'Support' }).waitFor();

    await page.getByLabel('Description', { exact: true }).fill('Answers order questions');
    await page.getByLabel('Voice').selectOption('sim-emma');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved.').waitFor();
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('button', { name: 'Unpublish' }).waitFor();
    await screenshot(page, '03-agent');

    const agent = (await key().get(`/agents/${agentId}`)).body;
    assert.equal(agent.status, 'published');
    assert.equal(agent.description, 'Answers order questions');
    assert.equal(agent.voice.voice_id, 'sim-emma');
  });

  test('a test-panel conversation: the agent answers as it goes, hang up, the call shows in Calls with its transcript', async () => {
    await page.getByRole('button', { name: 'Start a test call' }).click();
    const conversation = page.getByRole('list', { name: 'Conversation' });
    await conversation.getByText('Hi, this is Acme support.').waitFor();
    await page.getByLabel('What you say').fill('Where is my order?');
    await page.keyboard.press('Enter');
    await conversation.getByText('Where is my order?').waitFor();
    // The agent's answer to that line arrives as it is produced (a third line).
    await page.waitForFunction(
      () => document.querySelectorAll('.conversation li.says-agent').length >= 2,
      undefined,
      {
        timeout: 30_000,
      },
    );
    await screenshot(page, '04-test-panel');
    await page.getByRole('button', { name: 'Hang up' }).click();
    await page.getByRole('link', { name: 'See this call in Calls' }).click({ timeout: 30_000 });
    await page.waitForURL(/\/calls\/[0-9a-f-]{36}$/);
    testCallId = page.url().split('/').at(-1)!;
    await page.getByRole('heading', { name: 'Inbound web call' }).waitFor();
    const transcript = page.getByRole('region', { name: 'Transcript' });
    await transcript.getByText('Where is my order?').waitFor();
    await transcript.getByText('Hi, this is Acme support.').waitFor();
    await page.getByRole('region', { name: 'Analysis' }).getByText('Summary').waitFor({ timeout: 30_000 });
    await page
      .getByRole('link', { name: `call-${testCallId}` })
      .or(page.getByText(`call-${testCallId}`))
      .first()
      .waitFor();
    await screenshot(page, '05-call');

    const call = (await key().get(`/calls/${testCallId}`)).body;
    assert.equal(call.channel, 'web');
    assert.equal(call.direction, 'inbound');
    assert.equal(call.status, 'completed');
    assert.equal(call.end_reason, 'caller_hangup');
    const lines = (await key().get(`/calls/${testCallId}/transcript`)).body.data;
    assert.deepEqual(
      lines.slice(0, 2).map((l: { role: string; text: string }) => [l.role, l.text]),
      [
        ['agent', 'Hi, this is Acme support.'],
        ['caller', 'Where is my order?'],
      ],
    );

    await nav(page, 'Calls').click();
    await page.waitForURL(url('/calls'));
    await page.getByRole('cell', { name: 'Support' }).first().waitFor();
    await page.getByRole('cell', { name: 'inbound · web' }).waitFor();
    await screenshot(page, '06-calls');
  });

  test('the call page plays the call’s recording once it has one', async () => {
    await page.goto(url(`/calls/${testCallId}`));
    const recording = page.getByRole('region', { name: 'Recording' });
    await recording.getByText('No recording').waitFor(); // a typed test call carries no audio
    const writer = await RecordingWriter.open(recordingsDir, testCallId);
    writer.agent(new Int16Array(16_000).fill(-300), 0);
    writer.caller(new Int16Array(16_000).fill(300), 500);
    await writer.close(); // 2.5 s
    await page.reload();
    // The browser fetched the file through /v1 with the session and read its length.
    await page.waitForFunction(
      () => (document.querySelector('.recording audio')?.duration ?? 0) > 2.4,
      undefined,
      {
        timeout: 15_000,
      },
    );
    await recording.getByRole('link', { name: 'Download WAV' }).waitFor();
    await screenshot(page, '05b-call-recording');
  });

  test('phone numbers: assign the agent, then clear it', async () => {
    await nav(page, 'Phone numbers').click();
    const select = page.getByLabel('Agent for +4790000001');
    await select.selectOption(agentId);
    await page.getByRole('button', { name: 'Assign' }).click();
    await eventually(async () => (await key().get('/phone-numbers')).body.data[0].agent_id === agentId);
    await screenshot(page, '07-numbers');
    await select.selectOption('');
    await page.getByRole('button', { name: 'Clear' }).click();
    await eventually(async () => (await key().get('/phone-numbers')).body.data[0].agent_id === null);
  });

  test('webhooks: create (secret shown once), send a test event, see the delivery, resend, pause', async () => {
    await nav(page, 'Webhooks').click();
    await page.getByText('New endpoint').click();
    await page.getByLabel('URL').fill(`${receiver.url}/hooks`);
    await page.getByLabel('call.started').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = page.getByRole('textbox', { name: 'Signing secret' });
    await secret.waitFor();
    assert.match(await secret.inputValue(), /^whsec_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    await screenshot(page, '08-webhooks');

    await page.getByRole('link', { name: `Open ${receiver.url}/hooks` }).click();
    await page.getByRole('heading', { name: 'Endpoint' }).waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    const log = page.getByRole('region', { name: 'Delivery log' });
    await log.getByRole('cell', { name: 'webhook.test' }).waitFor();
    await log.getByText('delivered').first().waitFor({ timeout: 30_000 });
    await log.getByText('HTTP 200').first().waitFor();
    const received = await receiver.waitForRequests(1);
    assert.equal(JSON.parse(received[0]!.rawBody.toString()).type, 'webhook.test');

    // Every attempt of a delivery: its status code and how long it took.
    await log.getByRole('button', { name: '1 attempt' }).first().click();
    await log
      .getByRole('list', { name: 'Attempts' })
      .getByText(/Attempt 1 \(test\) at .*: \d+ ms, HTTP 200/)
      .waitFor();

    await log.getByRole('button', { name: 'Resend' }).first().click();
    await log.getByRole('cell', { name: 'resend', exact: true }).waitFor();
    await receiver.waitForRequests(2, 30_000);
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    await screenshot(page, '09-webhook');
    const hooks = (await key().get('/webhooks')).body.data;
    assert.equal(hooks[0].status, 'paused');
  });

  /** A webhook on `path` of the receiver, a test event sent from its page, and the first attempt's line. */
  async function testEventAttempt(path: string, answer: { status: number; body?: string }, line: RegExp) {
    receiver.answer = (_n, at) => (at === path ? answer : { status: 200 });
    const hook = await key().post('/webhooks', { url: `${receiver.url}${path}`, events: ['call.completed'] });
    assert.equal(hook.status, 201, hook.text);
    await page.goto(url(`/webhooks/${hook.body.id}`));
    await page.getByRole('button', { name: 'Send test event' }).click();
    const log = page.getByRole('region', { name: 'Delivery log' });
    await log.getByRole('button', { name: '1 attempt' }).click({ timeout: 30_000 });
    await log.getByRole('list', { name: 'Attempts' }).getByText(line).waitFor();
  }

  test("a failing receiver: the attempt shows its status code and the answer's start", async () => {
    await testEventAttempt(
      '/broken',
      { status: 500, body: 'receiver exploded' },
      /Attempt 1 \(test\) at .*: \d+ ms, HTTP 500: receiver exploded/,
    );
    await screenshot(page, '09b-webhook-attempts');
  });

  test("a receiver that answers 200 with a body: the attempt shows the answer's start too", async () => {
    await testEventAttempt(
      '/chatty',
      { status: 200, body: 'ok, stored as evt-42' },
      /Attempt 1 \(test\) at .*: \d+ ms, HTTP 200: ok, stored as evt-42/,
    );
  });

  test('API keys: create (secret shown once, it works), then revoke', async () => {
    await nav(page, 'API keys').click();
    await page.getByText('New key').click();
    await page.getByLabel('Name').fill('Reporting');
    await page.getByLabel('calls:read').check();
    await page.getByLabel('analytics:read').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretField = page.getByRole('textbox', { name: 'Secret of "Reporting"' });
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    assert.match(secret, /^svc_live_/);
    assert.equal((await stack.api.client(secret).get('/calls')).status, 200, 'the new key works');
    assert.equal((await stack.api.client(secret).get('/agents')).status, 403, 'only with its scopes');
    await page
      .getByRole('row', { name: /Reporting/ })
      .getByText('active')
      .waitFor();
    await screenshot(page, '10-keys');

    await page
      .getByRole('row', { name: /Reporting/ })
      .getByRole('button', { name: 'Revoke' })
      .click();
    await page
      .getByRole('row', { name: /Reporting/ })
      .getByText(/^revoked/)
      .waitFor();
    const rows = await stack.db.orm.em
      .getConnection()
      .execute<{ revoked_at: Date | null }[]>(
        "select revoked_at from api_keys where name = 'Reporting'",
        [],
        'all',
      );
    assert.ok(rows[0]!.revoked_at, 'revoked in the database');
    await page.reload();
    assert.equal(
      await page.getByRole('textbox', { name: /Secret of/ }).count(),
      0,
      'the secret is never shown again',
    );
  });

  test('usage: calls and minutes per day as a chart, with outcomes', async () => {
    await nav(page, 'Usage').click();
    await page.getByRole('img', { name: /Calls \(dark\) and minutes/ }).waitFor();
    await page.getByRole('region', { name: 'Totals' }).getByText('calls').waitFor();
    const totals = await page.getByRole('region', { name: 'Totals' }).innerText();
    assert.match(totals, /^1\s+calls/m);
    await screenshot(page, '11-usage');
  });

  test('more of each page: filters, pages of 20, rotating a secret, deleting an agent', async () => {
    // Calls: the API's filters.
    await nav(page, 'Calls').click();
    await page.getByRole('cell', { name: 'inbound · web' }).waitFor();
    await page.getByLabel('Direction').selectOption('outbound');
    await page.getByText('No calls match.').waitFor();
    await page.getByLabel('Direction').selectOption('inbound');
    await page.getByRole('cell', { name: 'inbound · web' }).waitFor();

    // Agents: 21 more make two pages.
    for (let i = 0; i < 21; i++)
      assert.equal((await key().post('/agents', { name: `Bulk ${i}` })).status, 201);
    await nav(page, 'Agents').click();
    await page.getByRole('link', { name: 'Bulk 20' }).waitFor();
    assert.equal(
      await page.getByRole('link', { name: 'Support' }).count(),
      0,
      'the oldest is on the next page',
    );
    await page.getByRole('button', { name: 'Older →' }).click();
    await page.getByRole('link', { name: 'Support' }).waitFor();
    await page.getByRole('button', { name: '← Newer' }).click();
    await page.getByRole('link', { name: 'Bulk 20' }).waitFor();

    // Deleting an agent.
    await page.getByRole('link', { name: 'Bulk 20' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(url('/agents'));
    await page.getByRole('link', { name: 'Bulk 19' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Bulk 20' }).count(), 0);

    // Rotating a webhook secret: the new one is shown once and signs from then on.
    const hooks = (await key().get('/webhooks')).body.data;
    const hook = hooks.find((h: { url: string }) => h.url.endsWith('/hooks'));
    await page.goto(url(`/webhooks/${hook.id}`));
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = page.getByRole('textbox', { name: 'New signing secret' });
    await secret.waitFor();
    assert.match(await secret.inputValue(), /^whsec_/);
  });

  test('no layout break at 1280×800 and at 390 px wide', async () => {
    for (const [size, viewport] of [
      ['desktop', DESKTOP],
      ['phone', PHONE],
    ] as const) {
      await page.setViewportSize(viewport);
      for (const path of [
        '/agents',
        `/agents/${agentId}`,
        '/calls',
        `/calls/${testCallId}`,
        '/webhooks',
        '/keys',
        '/usage',
        '/numbers',
      ]) {
        await page.goto(url(path));
        await page.locator('main h1').waitFor();
        await loaded(page);
        await assertNoHorizontalOverflow(page, `${path} at ${size}`);
        await screenshot(page, `layout-${size}${path.replace(/\//g, '-').replace(/-[0-9a-f-]{36}/, '-id')}`);
      }
    }
    await page.setViewportSize(DESKTOP);
  });

  test('keyboard: the sign-in form and the nav work without a mouse', async (t) => {
    const context = await browser.newContext({ viewport: DESKTOP });
    t.after(() => context.close());
    const p = await context.newPage();
    await p.goto(url('/sign-in'));
    await p.getByLabel('Email').focus();
    await p.keyboard.type(ownerEmail);
    await p.keyboard.press('Tab');
    await p.keyboard.type(TEST_PASSWORD);
    await p.keyboard.press('Enter');
    await p.waitForURL(url('/agents'));
    // A new page puts the focus on its heading; the sections are just before it.
    await p.waitForFunction(() => document.activeElement?.textContent === 'Agents');
    for (let i = 0; i < 6; i++) await p.keyboard.press('Shift+Tab');
    assert.equal(await p.evaluate(() => document.activeElement?.textContent), 'Calls');
    await p.keyboard.press('Enter');
    await p.waitForURL(url('/calls'));
  });

  test('a viewer sees no write control, and a forged write is refused by the server', async (t) => {
    const viewer = await createFixture(stack.db.orm, { workspaceId: owner.workspaceId, role: 'viewer' });
    const context = await browser.newContext({ viewport: DESKTOP });
    t.after(() => context.close());
    const p = await context.newPage();
    await p.goto(await inviteLink(viewer.userId));
    await p.getByLabel('New password').fill(TEST_PASSWORD);
    await p.getByLabel('Repeat the password').fill(TEST_PASSWORD);
    await p.getByRole('button', { name: 'Set password and sign in' }).click();
    await p.waitForURL(url('/agents'));
    await p.getByRole('link', { name: 'Bulk 19' }).waitFor();
    assert.equal(await p.getByText('New agent').count(), 0);

    await p.goto(url(`/agents/${agentId}`));
    await p.getByRole('heading', { name: 'Settings' }).waitFor();
    assert.equal(await p.getByLabel('Name').isEditable(), false);
    for (const name of ['Save changes', 'Publish', 'Unpublish', 'Delete', 'Start a test call']) {
      assert.equal(await p.getByRole('button', { name }).count(), 0, `no "${name}" button`);
    }
    await screenshot(p, '12-viewer-agent');
    for (const [path, control] of [
      ['/webhooks', 'New endpoint'],
      ['/keys', 'New key'],
    ]) {
      await p.goto(url(path));
      await p.locator('main h1').waitFor();
      await loaded(p);
      assert.equal(await p.getByText(control).count(), 0, `${path}: no "${control}"`);
    }
    assert.equal(await p.getByRole('button', { name: 'Revoke' }).count(), 0);
    await p.goto(url('/numbers'));
    await p.getByRole('rowheader', { name: '+4790000001' }).waitFor();
    assert.equal(await p.getByRole('combobox').count(), 0, 'no agent picker for a viewer');

    // The same request the owner's page would send, with the viewer's valid session and CSRF token.
    const forged = await p.evaluate(async () => {
      const session = (await (await fetch('/dashboard/auth/session')).json()) as { csrf_token: string };
      const res = await fetch('/v1/agents', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': session.csrf_token },
        body: JSON.stringify({ name: 'Forged' }),
      });
      return { status: res.status, body: (await res.json()) as ErrorAnswer };
    });
    assert.equal(forged.status, 403);
    assert.equal(forged.body.error.code, 'role_required');
  });

  test('a change without the CSRF token is refused', async () => {
    const refused = await page.evaluate(async () => {
      const res = await fetch('/v1/agents', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'No token' }),
      });
      return { status: res.status, body: (await res.json()) as ErrorAnswer };
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'csrf_token_invalid');
    const agents = (await key().get('/agents')).body.data.map((a: { name: string }) => a.name);
    assert.ok(!agents.includes('No token'));
  });

  test('the test panel sets the call’s metadata: the agent greets with the {{variable}} filled in', async () => {
    const created = await key().post('/agents', {
      name: 'Greeter',
      system_prompt: 'You help {{name}} with their order {{ order_id }}.',
      first_message: 'Hello {{name}}, this is Acme.',
    });
    assert.equal(created.status, 201, created.text);
    await page.goto(url(`/agents/${created.body.id}`));
    const metadata = page.getByRole('group', { name: 'Call metadata' });
    await metadata.getByLabel('name').fill('Kari');
    await metadata.getByLabel('order_id').fill('A-1042');
    await page.getByRole('button', { name: 'Start a test call' }).click();
    const conversation = page.getByRole('list', { name: 'Conversation' });
    await conversation.getByText('Hello Kari, this is Acme.').waitFor();
    await screenshot(page, '12b-test-panel-metadata');
    await page.getByRole('button', { name: 'Hang up' }).click();
    await page.getByRole('link', { name: 'See this call in Calls' }).waitFor({ timeout: 30_000 });
    const calls = (await key().get(`/calls?agent_id=${created.body.id}`)).body.data;
    assert.equal(calls.length, 1);
    assert.equal(calls[0].metadata.name, 'Kari');
    assert.equal(calls[0].metadata.order_id, 'A-1042');
    assert.match(calls[0].metadata.from_label, /^Test panel \(/);
  });

  test('no script error and nothing refused by the Content-Security-Policy on any page so far', () => {
    assert.deepEqual(pageErrors, []);
  });

  test('an expired session is sent to sign-in, from a page load and from a click inside the app', async () => {
    await page.goto(url('/agents'));
    await page.getByRole('heading', { name: 'Agents', exact: true }).waitFor();
    // Nothing of the page still loading: a request sent after the session ends would send the
    // browser to sign-in by itself, before the click this test makes.
    await loaded(page);
    await stack.db.orm.em
      .getConnection()
      .execute("update dashboard_sessions set last_seen_at = now() - interval '31 minutes'", [], 'run');
    await nav(page, 'Calls').click();
    await page.waitForURL(url('/sign-in?expired=1&next=%2Fcalls'));
    await page.getByText('Your session ended. Sign in again.').waitFor();
    await screenshot(page, '13-expired');
    await page.goto(url('/webhooks'));
    await page.waitForURL(url('/sign-in?next=%2Fwebhooks'));
    await page.getByLabel('Email').fill(ownerEmail);
    await page.getByLabel('Password').fill(TEST_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(url('/webhooks'), { timeout: 10_000 });
  });
});
