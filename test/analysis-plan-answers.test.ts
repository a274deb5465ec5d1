import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { AnalysisPlan } from '../db/entities/index.js';
import { LlmPlanAnswerer, planEndpointFromSettings } from '../lib/analysis/plan-answerer.js';
import type { TranscriptLine } from '../lib/calls/transcript.js';
import { createLogger } from '../lib/logger.js';
import {
  type ChatStandIn,
  type SeenRequest,
  schemaAnswer,
  startChatStandIn,
} from './support/chat-completions-stand-in.js';

// The analysis plan's answers (post-call spec section 1) against a local OpenAI-compatible
// stand-in over real HTTP: the data by the plan's schema and the verdict, each asked with a strict
// JSON-schema response format; an answer that does not validate is asked again once, then left
// null with the reason in the log; a refusal is null too; passing trouble is thrown (the activity
// is retried by Temporal).

let standIn: ChatStandIn;
const logged: Record<string, unknown>[] = [];
const logger = createLogger('warn', { write: (line) => logged.push(JSON.parse(line)) });

before(async () => {
  standIn = await startChatStandIn();
});
after(() => standIn.close());

const answerer = () =>
  new LlmPlanAnswerer({ url: standIn.url, apiKey: 'sk-plan', model: 'plan-model', timeoutMs: 5_000 }, logger);

const transcript: TranscriptLine[] = [
  { index: 0, role: 'agent', text: 'Hi, Acme Dental. When would you like to come?', offsetSeconds: 0 },
  { index: 1, role: 'caller', text: 'Tuesday, and call me back on +4790011111.', offsetSeconds: 4 },
];
const dataSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['day', 'callback'],
  properties: { day: { enum: ['monday', 'tuesday'] }, callback: { type: 'string', pattern: '^\\+[0-9]+$' } },
};
const plan: AnalysisPlan = { dataSchema, successCriteria: 'A day was agreed.' };
const ask = (which: AnalysisPlan = plan) =>
  answerer().answer({ callId: 'call-1', transcript, ending: { endReason: 'agent_hangup' }, plan: which });

const json = (value: unknown) => ({ kind: 'json', text: JSON.stringify(value) }) as const;
const isVerdict = (request: SeenRequest) => request.body.response_format.json_schema.name === 'call_verdict';

function reset(reply: ChatStandIn['reply']) {
  standIn.requests.length = 0;
  logged.length = 0;
  standIn.reply = reply;
}

test('asks for the data by the plan’s schema and for the verdict on its criteria, strict, with the transcript', async () => {
  reset((request) =>
    isVerdict(request)
      ? json({ success: true, reason: 'Tuesday was agreed.' })
      : json({ day: 'tuesday', callback: '+4790011111' }),
  );
  assert.deepEqual(await ask(), {
    data: { day: 'tuesday', callback: '+4790011111' },
    success: true,
    success_reason: 'Tuesday was agreed.',
  });
  assert.equal(standIn.requests.length, 2);
  for (const request of standIn.requests) {
    assert.equal(request.headers.authorization, 'Bearer sk-plan');
    assert.equal(request.body.model, 'plan-model');
    assert.equal(request.body.response_format.json_schema.strict, true);
    assert.equal(
      request.body.messages[1].content,
      'end_reason: agent_hangup\nagent: Hi, Acme Dental. When would you like to come?\ncaller: Tuesday, and call me back on +4790011111.',
    );
  }
  const data = standIn.requests.find((request) => !isVerdict(request))!;
  assert.deepEqual(data.body.response_format.json_schema, {
    name: 'call_data',
    schema: dataSchema,
    strict: true,
  });
  const verdict = standIn.requests.find(isVerdict)!;
  assert.match(verdict.body.messages[0].content, /Success criteria: A day was agreed\./);
  assert.deepEqual(verdict.body.response_format.json_schema.schema.required, ['success', 'reason']);
  assert.deepEqual(logged, []);
});

test('only what the plan names is asked: no criteria, no verdict; no schema, no data', async () => {
  reset((request) => schemaAnswer(request));
  assert.deepEqual(await ask({ dataSchema, successCriteria: null }), {
    data: null,
    success: null,
    success_reason: null,
  });
  // 'example' does not match the pattern: asked again, and again it does not: left null.
  assert.equal(standIn.requests.length, 2);
  reset((request) => schemaAnswer(request, { reason: 'Agreed.' }));
  assert.deepEqual(await ask({ dataSchema: null, successCriteria: 'Agreed.' }), {
    data: null,
    success: true,
    success_reason: 'Agreed.',
  });
  assert.equal(standIn.requests.length, 1);
});

test('an answer that does not validate is asked for again once, saying what was wrong; then it is taken', async () => {
  let dataAsked = 0;
  reset((request) => {
    if (isVerdict(request)) return json({ success: false, reason: 'No day was agreed.' });
    dataAsked++;
    return dataAsked === 1
      ? json({ day: 'friday', callback: '+4790011111' })
      : json({ day: 'monday', callback: '+47900' });
  });
  const answers = await ask();
  assert.deepEqual(answers, {
    data: { day: 'monday', callback: '+47900' },
    success: false,
    success_reason: 'No day was agreed.',
  });
  const [first, second] = standIn.requests.filter((request) => !isVerdict(request));
  assert.equal(second.body.messages.length, first.body.messages.length + 2);
  assert.equal(second.body.messages.at(-2).role, 'assistant');
  assert.match(
    second.body.messages.at(-1).content,
    /does not follow the schema: \/day must be equal to one of the allowed values/,
  );
});

test('twice invalid, not JSON, or refused: the field is null and the log says why; the rest stands', async () => {
  reset((request) =>
    isVerdict(request) ? json({ success: 'yes', reason: 'x' }) : { kind: 'json', text: 'Tuesday!' },
  );
  assert.deepEqual(await ask(), { data: null, success: null, success_reason: null });
  assert.equal(standIn.requests.length, 4, 'each question asked twice');
  assert.deepEqual(
    logged.map((line) => [line.msg, line.callId]),
    [
      ['analysis plan: data left null', 'call-1'],
      ['analysis plan: verdict left null', 'call-1'],
    ],
  );
  assert.match(String(logged[0].reason), /call_data: the answer is not a JSON object \(asked 2 times\)/);
  assert.match(String(logged[1].reason), /call_verdict: "success" must be true or false/);

  // A refusal (the endpoint does not take json_schema) is not asked again.
  reset((request) =>
    isVerdict(request)
      ? json({ success: true, reason: 'Agreed.' })
      : {
          kind: 'status',
          status: 400,
          body: { error: { message: 'response_format json_schema is not supported' } },
        },
  );
  assert.deepEqual(await ask(), { data: null, success: true, success_reason: 'Agreed.' });
  assert.equal(standIn.requests.length, 2);
  assert.match(String(logged[0].reason), /400/);
});

test('passing trouble (a 503) is thrown, so the analysis step is retried; the key never shows', async () => {
  reset(() => ({ kind: 'status', status: 503 }));
  await assert.rejects(ask(), (error: Error) => {
    assert.match(error.message, /503/);
    assert.doesNotMatch(error.message, /sk-plan/);
    return true;
  });
});

test('the plan is answered by ANALYSIS_LLM, else VOICE_LLM, given at least 30 s; without either, by nothing', () => {
  const analysis = { url: 'http://a/v1', apiKey: undefined, model: 'a', timeoutMs: 60_000 };
  const voice = { url: 'http://v/v1', apiKey: undefined, model: 'v', timeoutMs: 10_000 };
  assert.deepEqual(planEndpointFromSettings({ analysisLlm: analysis, voiceLlm: voice }), analysis);
  assert.deepEqual(planEndpointFromSettings({ analysisLlm: undefined, voiceLlm: voice }), {
    ...voice,
    timeoutMs: 30_000,
  });
  assert.equal(planEndpointFromSettings({ analysisLlm: undefined, voiceLlm: undefined }), undefined);
});
