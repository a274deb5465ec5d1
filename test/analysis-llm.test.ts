import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { AnalysisRejectedError } from '../lib/analysis/analyzer.js';
import { analyzerFromSettings } from '../lib/analysis/index.js';
import { chatCompletionsUrl, LlmAnalyzer } from '../lib/analysis/llm-analyzer.js';
import { TranscriptAnalyzer } from '../lib/analysis/transcript-analyzer.js';
import type { TranscriptLine } from '../lib/calls/transcript.js';
import { loadSettings } from '../lib/settings.js';

// The OpenAI-compatible analysis adapter against a local stand-in that speaks the
// chat-completions protocol (JSON-schema response format).

interface Seen {
  path: string;
  authorization: string | undefined;
  body: any;
}

let server: Server;
let baseUrl: string;
const seen: Seen[] = [];
/** What the stand-in answers next: status and body. */
let reply: { status: number; body: unknown } = { status: 200, body: {} };

before(async () => {
  server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    seen.push({
      path: req.url ?? '',
      authorization: req.headers.authorization,
      body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
    });
    res.writeHead(reply.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(reply.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
after(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const transcript: TranscriptLine[] = [
  { index: 0, role: 'agent', text: 'Hi, this is Ada calling about your appointment.', offsetSeconds: 0 },
  { index: 1, role: 'caller', text: 'Great, thanks. Please text me the time.', offsetSeconds: 3 },
];

/** An ending that settles nothing: only the words tell the outcome. */
const hungUp = { endReason: 'agent_hangup' };

const completion = (content: unknown) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  choices: [
    { index: 0, message: { role: 'assistant', content: JSON.stringify(content) }, finish_reason: 'stop' },
  ],
});

const analyzer = () =>
  new LlmAnalyzer({ url: baseUrl, apiKey: 'sk-test', model: 'test-model', timeoutMs: 5_000 });

test('asks for a JSON-schema answer with the transcript and returns it', async () => {
  const answer = {
    summary: 'The caller confirmed the appointment.',
    outcome: 'resolved',
    sentiment: 'positive',
    action_items: ['Text the appointment time'],
  };
  reply = { status: 200, body: completion(answer) };
  seen.length = 0;
  assert.deepEqual(await analyzer().analyze(transcript, hungUp), answer);
  const [request] = seen;
  assert.equal(request.path, '/v1/chat/completions');
  assert.equal(request.authorization, 'Bearer sk-test');
  assert.equal(request.body.model, 'test-model');
  assert.equal(request.body.response_format.type, 'json_schema');
  assert.equal(request.body.response_format.json_schema.strict, true);
  assert.deepEqual(request.body.response_format.json_schema.schema.required, [
    'summary',
    'outcome',
    'sentiment',
    'action_items',
  ]);
  const user = request.body.messages.find((message: { role: string }) => message.role === 'user');
  assert.match(user.content, /^end_reason: agent_hangup\n/);
  assert.match(user.content, /agent: Hi, this is Ada/);
  assert.match(user.content, /caller: Great, thanks/);
});

test('null outcome and sentiment are allowed', async () => {
  reply = {
    status: 200,
    body: completion({ summary: 's', outcome: null, sentiment: null, action_items: [] }),
  };
  const result = await analyzer().analyze(transcript, hungUp);
  assert.equal(result.outcome, null);
  assert.equal(result.sentiment, null);
});

test('5xx and 429 are passing troubles (retried); 4xx and malformed answers are refusals', async () => {
  for (const status of [500, 503, 429]) {
    reply = { status, body: { error: { message: 'busy' } } };
    await assert.rejects(
      analyzer().analyze(transcript, hungUp),
      (error: Error) => !(error instanceof AnalysisRejectedError),
    );
  }
  reply = { status: 401, body: { error: { message: 'bad key' } } };
  await assert.rejects(analyzer().analyze(transcript, hungUp), AnalysisRejectedError);
  reply = {
    status: 200,
    body: completion({ summary: 's', outcome: 'great', sentiment: null, action_items: [] }),
  };
  await assert.rejects(analyzer().analyze(transcript, hungUp), AnalysisRejectedError);
  reply = { status: 200, body: { choices: [{ message: { content: 'not json' } }] } };
  await assert.rejects(analyzer().analyze(transcript, hungUp), AnalysisRejectedError);
});

test('settings choose the adapter: off by default, on with ANALYSIS_LLM_URL', () => {
  assert.ok(analyzerFromSettings(loadSettings({})) instanceof TranscriptAnalyzer);
  const settings = loadSettings({ ANALYSIS_LLM_URL: baseUrl, ANALYSIS_LLM_MODEL: 'm' });
  assert.ok(analyzerFromSettings(settings) instanceof LlmAnalyzer);
  assert.equal(chatCompletionsUrl('http://h/v1/'), 'http://h/v1/chat/completions');
  assert.equal(chatCompletionsUrl('http://h/v1/chat/completions'), 'http://h/v1/chat/completions');
});

test('the default analyzer judges by what was said where the ending settles nothing', async () => {
  const rules = new TranscriptAnalyzer();
  const line = (index: number, role: 'agent' | 'caller', text: string): TranscriptLine => ({
    index,
    role,
    text,
    offsetSeconds: index,
  });
  const escalated = await rules.analyze(
    [
      line(0, 'agent', 'Hello, this is Ada.'),
      line(1, 'caller', 'This is unacceptable, I want a manager.'),
      line(2, 'agent', 'I have escalated this, and a manager will call you back tomorrow.'),
    ],
    hungUp,
  );
  assert.equal(escalated.outcome, 'escalated');
  assert.equal(escalated.sentiment, 'negative');
  assert.deepEqual(escalated.action_items, ['Manager to call the customer back tomorrow']);
  const abandoned = await rules.analyze([line(0, 'agent', 'Hello, this is Ada.')], hungUp);
  assert.equal(abandoned.outcome, 'abandoned');
  assert.equal(abandoned.sentiment, null);
  const unclear = await rules.analyze(
    [line(0, 'agent', 'Hello.'), line(1, 'caller', 'What is the weather like?')],
    hungUp,
  );
  assert.equal(unclear.outcome, null);
  assert.equal(unclear.sentiment, 'neutral');
});

test('how the call ended settles the outcome before any wording, for the rules and the model alike', async () => {
  const line = (index: number, role: 'agent' | 'caller', text: string): TranscriptLine => ({
    index,
    role,
    text,
    offsetSeconds: index,
  });
  // A language-model agent's words miss the rules' phrases; the call's end_reason says transferred.
  const transferred = [
    line(0, 'agent', 'Hello, this is Ada.'),
    line(1, 'caller', 'I need to speak to someone in billing.'),
    line(2, 'agent', 'Of course, connecting you now.'),
  ];
  const rules = new TranscriptAnalyzer();
  const byRules = await rules.analyze(transferred, { endReason: 'transferred' });
  assert.equal(byRules.outcome, 'transferred');
  assert.match(byRules.summary, /transferred the call/);
  reply = {
    status: 200,
    body: completion({ summary: 's', outcome: null, sentiment: null, action_items: [] }),
  };
  seen.length = 0;
  const byModel = await analyzer().analyze(transferred, { endReason: 'transferred' });
  assert.equal(byModel.outcome, 'transferred', 'the model’s null does not win over the record');
  assert.match(seen[0].body.messages.at(-1).content, /^end_reason: transferred\n/);

  // The caller hung up after the greeting, though the greeting names a manager (an escalation's word).
  const greeting = [
    line(0, 'agent', 'Hello, this is Ada; I can also put a manager on.'),
    line(1, 'caller', 'Hello?'),
  ];
  assert.equal((await rules.analyze(greeting, { endReason: 'caller_hangup' })).outcome, 'abandoned');
  reply = {
    status: 200,
    body: completion({ summary: 's', outcome: 'escalated', sentiment: null, action_items: [] }),
  };
  assert.equal((await analyzer().analyze(greeting, { endReason: 'caller_hangup' })).outcome, 'abandoned');

  // The agent failed (it apologised and hung up): not resolved, whatever thanks came before.
  const failed = [
    line(0, 'agent', 'Hello, this is Ada.'),
    line(1, 'caller', 'Great, thanks, I want to move my appointment.'),
    line(2, 'agent', 'I am sorry, something went wrong on my side. Please call again later.'),
  ];
  const failedByRules = await rules.analyze(failed, { endReason: 'agent_error' });
  assert.equal(failedByRules.outcome, null);
  assert.match(failedByRules.summary, /agent failed/);
  reply = {
    status: 200,
    body: completion({ summary: 's', outcome: 'resolved', sentiment: null, action_items: [] }),
  };
  assert.equal((await analyzer().analyze(failed, { endReason: 'agent_error' })).outcome, null);

  // Where the ending settles nothing, the words decide as before.
  assert.equal((await rules.analyze(failed, hungUp)).outcome, 'resolved');
});
