import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  CallerModel,
  CallerModelError,
  callerEndpointFromSettings,
  callerModelFromSettings,
} from '../lib/test-runs/caller-model.js';
import {
  type ChatStandIn,
  endCall,
  type SeenRequest,
  type StandInReply,
  startChatStandIn,
} from './support/chat-completions-stand-in.js';

// The simulated caller of a test run (lib/test-runs/caller-model.ts, post-call spec section 2)
// against a local OpenAI-compatible stand-in: what it asks the model (its part, the conversation
// as the caller heard it, the end_call tool) and how it reads the answer.

let standIn: ChatStandIn;
let next: StandInReply = { kind: 'json', text: 'Hello.' };
before(async () => {
  standIn = await startChatStandIn(() => next);
});
after(() => standIn?.close());

const endpoint = () => ({ url: standIn.url, apiKey: undefined, model: 'caller-model', timeoutMs: 5_000 });
const ask = async (reply: StandInReply, conversation: Parameters<CallerModel['nextLine']>[1] = []) => {
  next = reply;
  const line = await new CallerModel(endpoint()).nextLine('You want a cleaning.', conversation);
  return { line, request: standIn.requests.at(-1) as SeenRequest };
};

test('the caller is offered end_call alone, not streamed; speaking first it hears the agent silent', async () => {
  const { line, request } = await ask({ kind: 'json', text: ' Hi, a cleaning please. ' });
  assert.deepEqual(line, { text: 'Hi, a cleaning please.', hangUp: false });
  assert.equal(request.body.model, 'caller-model');
  assert.equal(request.body.stream, false);
  assert.deepEqual(request.body.tools, [
    {
      type: 'function',
      function: {
        name: 'end_call',
        description: 'Hang up: call it when what you called for is done, or the conversation is over.',
        parameters: { type: 'object', properties: {}, additionalProperties: false },
      },
    },
  ]);
  assert.equal(request.body.messages[0].role, 'system');
  assert.match(request.body.messages[0].content, /call end_call\. Your part: You want a cleaning\.$/);
  assert.deepEqual(request.body.messages.slice(1), [
    { role: 'user', content: '(the agent picked up and is silent)' },
  ]);
});

test('the agent’s lines are what the caller hears (user), its own are assistant; end_call hangs up', async () => {
  const { line, request } = await ask({ kind: 'json', text: 'Thanks, bye!', toolCalls: [endCall()] }, [
    { role: 'agent', text: 'Acme Dental, hello.' },
    { role: 'caller', text: 'A cleaning, please.' },
    { role: 'agent', text: 'Tuesday at nine?' },
  ]);
  assert.deepEqual(line, { text: 'Thanks, bye!', hangUp: true });
  assert.deepEqual(request.body.messages.slice(1), [
    { role: 'user', content: 'Acme Dental, hello.' },
    { role: 'assistant', content: 'A cleaning, please.' },
    { role: 'user', content: 'Tuesday at nine?' },
  ]);
  // end_call alone: no line, still a hang-up.
  assert.deepEqual((await ask({ kind: 'json', text: '', toolCalls: [endCall()] })).line, {
    text: null,
    hangUp: true,
  });
  // Another tool is not a hang-up.
  assert.deepEqual(
    (await ask({ kind: 'json', text: 'Hm.', toolCalls: [{ name: 'other', arguments: '{}' }] })).line,
    { text: 'Hm.', hangUp: false },
  );
});

test('no line and no end_call, or a refusal, is a CallerModelError; passing trouble is retryable', async () => {
  const failure = async (reply: StandInReply) => {
    try {
      await ask(reply);
    } catch (error) {
      assert.ok(error instanceof CallerModelError);
      return { retryable: error.retryable, message: error.message };
    }
    assert.fail('no error');
  };
  assert.deepEqual(await failure({ kind: 'json', text: '  ' }), {
    retryable: false,
    message: 'test caller model: the answer had no line and no end_call',
  });
  assert.equal((await failure({ kind: 'status', status: 400 })).retryable, false);
  assert.equal((await failure({ kind: 'status', status: 503 })).retryable, true);
});

test('the conversational model plays the caller, else the analysis model, else none', () => {
  const voice = { url: 'http://voice/v1', apiKey: undefined, model: 'v', timeoutMs: 1 };
  const analysis = { url: 'http://analysis/v1', apiKey: undefined, model: 'a', timeoutMs: 1 };
  assert.equal(callerEndpointFromSettings({ voiceLlm: voice, analysisLlm: analysis }), voice);
  assert.equal(callerEndpointFromSettings({ voiceLlm: undefined, analysisLlm: analysis }), analysis);
  assert.equal(callerEndpointFromSettings({ voiceLlm: undefined, analysisLlm: undefined }), undefined);
  assert.equal(callerModelFromSettings({ voiceLlm: undefined, analysisLlm: undefined }), null);
  assert.ok(callerModelFromSettings({ voiceLlm: undefined, analysisLlm: analysis }) instanceof CallerModel);
});
