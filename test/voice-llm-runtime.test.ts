import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { AgentSnapshot } from '../db/entities/index.js';
import type { TranscriptLine } from '../lib/calls/transcript.js';
import { baseUrlOf, retryAfterMs, scrubSecret } from '../lib/llm/openai-client.js';
import { loadSettings } from '../lib/settings.js';
import { apologyLine } from '../lib/voice-runtime/apology.js';
import { fillVariables } from '../lib/voice-runtime/dynamic-variables.js';
import { voiceRuntimeFromSettings, voiceRuntimeInfo } from '../lib/voice-runtime/from-settings.js';
import { OpenAiCompatibleRuntime } from '../lib/voice-runtime/openai-compatible-runtime.js';
import { ScriptedAgent } from '../lib/voice-runtime/scripted-agent.js';
import { SentenceSplitter, synthesisPieces } from '../lib/voice-runtime/sentences.js';
import {
  type ConversationContext,
  type VoiceRuntime,
  VoiceRuntimeError,
} from '../lib/voice-runtime/voice-runtime.js';
import {
  type ChatStandIn,
  endCall,
  type StandInReply,
  sendDigits,
  startChatStandIn,
  streamed,
  transferCall,
} from './support/chat-completions-stand-in.js';

// The language-model voice runtime (operations contract, section 7) against a local
// OpenAI-compatible stand-in over real HTTP and real server-sent events: prompt assembly, dynamic
// variables, streaming with sentences handed over as they complete, tool calls assembled from
// streamed pieces, a plain JSON answer, and how each failure is classified for Temporal's retries.

const API_KEY = 'sk-test-voice-5ecret-0123456789';

let standIn: ChatStandIn;
before(async () => {
  standIn = await startChatStandIn();
});
after(async () => {
  await standIn?.close();
});
beforeEach(() => {
  standIn.requests.length = 0;
});

const agent = (overrides: Partial<AgentSnapshot> = {}): AgentSnapshot => ({
  name: 'Ada',
  language: 'en-US',
  systemPrompt: 'You are Ada from Acme Dental. The patient is {{first_name}}; their appointment is {{date}}.',
  firstMessage: null,
  outboundFirstMessage: null,
  voiceProvider: null,
  voiceId: null,
  llmProvider: null,
  llmModel: null,
  ...overrides,
});

const context = (overrides: Partial<ConversationContext> = {}): ConversationContext => ({
  agent: agent(),
  direction: 'outbound',
  channel: 'phone',
  callFirstMessage: null,
  metadata: { first_name: 'Kari', date: 'Tuesday at 10' },
  ownNumber: '+4722000001',
  ...overrides,
});

const line = (index: number, role: 'agent' | 'caller', text: string): TranscriptLine => ({
  index,
  role,
  text,
  offsetSeconds: index,
});

const conversation: TranscriptLine[] = [
  line(0, 'agent', 'Hi Kari, this is Ada from Acme Dental.'),
  line(1, 'caller', 'Oh, hi. Yes?'),
  line(2, 'agent', 'I am calling about your appointment on Tuesday at 10.'),
  line(3, 'caller', 'Can I move it to Wednesday?'),
];

const runtime = (
  options: { timeoutMs?: number; apiKey?: string | null; transferNumber?: string | null } = {},
) =>
  new OpenAiCompatibleRuntime({
    url: standIn.url,
    apiKey: options.apiKey === null ? undefined : (options.apiKey ?? API_KEY),
    model: 'stand-in-model',
    timeoutMs: options.timeoutMs ?? 5_000,
    transferNumber: options.transferNumber ?? null,
  });

const replyWith = (reply: StandInReply) => {
  standIn.reply = () => reply;
};

describe('dynamic variables', () => {
  test('{{name}} takes the metadata value; unknown names stay as written; spaces inside are allowed', () => {
    const metadata = { first_name: 'Kari', empty: '' };
    assert.equal(fillVariables('Hi {{first_name}}!', metadata), 'Hi Kari!');
    assert.equal(fillVariables('Hi {{ first_name }}!', metadata), 'Hi Kari!');
    assert.equal(
      fillVariables('Order {{order_id}} for {{first_name}}', metadata),
      'Order {{order_id}} for Kari',
    );
    assert.equal(
      fillVariables('[{{empty}}]', metadata),
      '[]',
      'a key that is present is used, even when empty',
    );
    assert.equal(fillVariables('{{constructor}} {{toString}}', metadata), '{{constructor}} {{toString}}');
  });

  test('escaping: \\{{ is a literal {{, whatever the metadata holds; values are not expanded again', () => {
    const metadata = { name: 'Kari', trick: '{{name}}' };
    assert.equal(
      fillVariables('Say \\{{name}} literally, then {{name}}', metadata),
      'Say {{name}} literally, then Kari',
    );
    assert.equal(fillVariables('{{trick}}', metadata), '{{name}}');
    assert.equal(fillVariables('an open {{ without a close', metadata), 'an open {{ without a close');
    assert.equal(fillVariables('{{{name}}}', metadata), '{Kari}');
  });

  test('time linear in the text: an unclosed {{ before 49,000 spaces (a system prompt) is quick', () => {
    const prompt = `{{a${' '.repeat(49_000)}`;
    const started = performance.now();
    assert.equal(fillVariables(prompt, { a: 'x' }), prompt);
    // The earlier pattern took 16 s here (quadratic); linear is about a millisecond.
    assert.ok(performance.now() - started < 1_000, `${performance.now() - started} ms`);
  });

  test('every opening line of the scripted agent fills them too', async () => {
    const scripted = new ScriptedAgent();
    const metadata = { first_name: 'Kari' };
    assert.equal(
      await scripted.openingLine(
        context({ metadata, callFirstMessage: 'Hei {{first_name}}, {{unknown}} here.' }),
      ),
      'Hei Kari, {{unknown}} here.',
    );
    assert.equal(
      await scripted.openingLine(
        context({
          metadata,
          agent: agent({ outboundFirstMessage: 'Calling {{first_name}}', firstMessage: 'x' }),
        }),
      ),
      'Calling Kari',
    );
    assert.equal(
      await scripted.openingLine(
        context({ metadata, agent: agent({ firstMessage: 'Hello {{first_name}}' }) }),
      ),
      'Hello Kari',
    );
    assert.equal(
      await scripted.openingLine(
        context({ metadata, direction: 'inbound', agent: agent({ firstMessage: 'Acme, {{first_name}}?' }) }),
      ),
      'Acme, Kari?',
    );
    assert.equal(await scripted.openingLine(context({ metadata, callFirstMessage: '' })), null);
  });
});

describe('prompt assembly', () => {
  test('one system message (prompt with variables, then the service instructions), roles in order; end_call only without a transfer target', async () => {
    replyWith(streamed('Of course. Wednesday at 10 works.'));
    const turn = await runtime().respond(context(), conversation);
    assert.equal(turn.say, 'Of course. Wednesday at 10 works.');
    assert.deepEqual(turn.next, { kind: 'continue' });

    assert.equal(standIn.requests.length, 1);
    const [request] = standIn.requests;
    assert.equal(request.path, '/v1/chat/completions');
    assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
    assert.equal(request.body.model, 'stand-in-model');
    assert.equal(request.body.stream, true);
    const messages: { role: string; content: string }[] = request.body.messages;
    assert.deepEqual(
      messages.map((message) => message.role),
      ['system', 'assistant', 'user', 'assistant', 'user'],
    );
    assert.deepEqual(
      messages.slice(1).map((message) => message.content),
      conversation.map((entry) => entry.text),
    );
    const system = messages[0].content;
    assert.ok(
      system.startsWith(
        'You are Ada from Acme Dental. The patient is Kari; their appointment is Tuesday at 10.\n\n',
      ),
      system,
    );
    assert.doesNotMatch(system, /\{\{/);
    assert.match(system, /You placed this call: the person did not call you/);
    assert.match(system, /say who you are \(Ada\) and why you are calling/);
    assert.match(system, /Speak American English \(en-US\)/);
    // No metadata.transfer_to and no TRANSFER_NUMBER: transfer_call is not offered at all, and
    // nothing invites a number the person gives.
    assert.deepEqual(
      request.body.tools.map((tool: { function: { name: string } }) => tool.function.name),
      ['end_call'],
    );
    assert.deepEqual(request.body.tools[0].function.parameters.properties, {});
    assert.match(system, /This call has no number to transfer to/);
    assert.match(system, /Never transfer to a number the person gives you/);
  });

  test('transfer_call is offered with the call’s one target as its only choice: metadata.transfer_to, else TRANSFER_NUMBER', async () => {
    replyWith(streamed('Sure.'));
    await runtime({ transferNumber: '+4722000100' }).respond(context(), conversation);
    await runtime({ transferNumber: '+4722000100' }).respond(
      context({ metadata: { transfer_to: '+4722334455' } }),
      conversation,
    );
    const [deployment, integrator] = standIn.requests.map((request) => request.body.tools);
    for (const [tools, target] of [
      [deployment, '+4722000100'],
      [integrator, '+4722334455'],
    ] as const) {
      assert.deepEqual(
        tools.map((tool: { function: { name: string } }) => tool.function.name),
        ['end_call', 'transfer_call'],
      );
      const parameters = tools[1].function.parameters;
      assert.deepEqual(parameters.required, ['number']);
      assert.deepEqual(parameters.properties.number.enum, [target]);
    }
  });

  test('the agent’s transfer_destinations are the only choices (with their descriptions), before metadata.transfer_to and TRANSFER_NUMBER; the model picks one', async () => {
    const destinations = [
      { number: '+4722000200', description: 'Billing questions', mode: 'cold' as const, message: null },
      { number: '+4722000300', description: 'The front desk', mode: 'warm' as const, message: 'A caller.' },
    ];
    const withDestinations = context({ metadata: { transfer_to: '+4722334455' } });
    withDestinations.agent = { ...withDestinations.agent, transferDestinations: destinations };
    replyWith(streamed('Connecting you to billing.', [transferCall('+47 22 00 02 00')]));
    const turn = await runtime({ transferNumber: '+4722000100' }).respond(withDestinations, conversation);
    assert.deepEqual(turn.next, { kind: 'transfer', to: '+4722000200' });
    const request = standIn.requests[0].body;
    const transfer = request.tools[1].function;
    assert.equal(transfer.name, 'transfer_call');
    assert.deepEqual(transfer.parameters.properties.number.enum, ['+4722000200', '+4722000300']);
    assert.match(transfer.description, /\+4722000200: Billing questions/);
    assert.match(transfer.description, /\+4722000300: The front desk/);
    const system = request.messages[0].content as string;
    assert.match(system, /whose description fits what they need/);
    assert.doesNotMatch(
      system,
      /\+4722334455|\+4722000100/,
      'neither metadata.transfer_to nor TRANSFER_NUMBER is offered',
    );

    // The integrator's own metadata.transfer_to is not one of them: refused, nothing dialled.
    standIn.requests.length = 0;
    standIn.reply = (request) =>
      request.body.messages.at(-1).role === 'tool'
        ? streamed('I can put you through to billing or the front desk.')
        : streamed('Connecting you.', [transferCall('+4722334455')]);
    const refused = await runtime().respond(withDestinations, conversation);
    assert.deepEqual(refused.next, { kind: 'continue' });
    const result = standIn.requests[1].body.messages.at(-1).content;
    assert.match(result, /^transfer_not_allowed: \+4722334455 is not a number/);
    assert.match(result, /The only numbers are \+4722000200, \+4722000300/);

    // With a choice, a transfer_call without a number is not guessed.
    standIn.requests.length = 0;
    standIn.reply = (request) =>
      request.body.messages.at(-1).role === 'tool'
        ? streamed('Which department would you like?')
        : streamed('Connecting you.', [{ name: 'transfer_call', arguments: '{}' }]);
    assert.deepEqual((await runtime().respond(withDestinations, conversation)).next, { kind: 'continue' });
  });

  test('calls that come in are told so, not that the agent placed them; web calls too', async () => {
    replyWith(streamed('Hello!'));
    await runtime().respond(context({ direction: 'inbound' }), [line(0, 'caller', 'Hello?')]);
    await runtime().respond(context({ direction: 'inbound', channel: 'web', ownNumber: null }), [
      line(0, 'caller', 'Hello?'),
    ]);
    const [phone, web] = standIn.requests.map((request) => request.body.messages[0].content as string);
    assert.match(phone, /The person called you\./);
    assert.doesNotMatch(phone, /You placed this call/);
    assert.match(web, /from a web page/);
    assert.match(web, /voice call in a web browser/);
  });

  test('an outbound call with no opening line configured: the model opens; a configured one is used as is', async () => {
    replyWith(streamed('Hi Kari, this is Ada from Acme Dental, calling about your appointment.'));
    assert.equal(
      await runtime().openingLine(context()),
      'Hi Kari, this is Ada from Acme Dental, calling about your appointment.',
    );
    assert.deepEqual(
      standIn.requests[0].body.messages.map((message: { role: string }) => message.role),
      ['system'],
    );
    assert.equal(
      await runtime().openingLine(context({ callFirstMessage: 'Hi {{first_name}}, Ada here.' })),
      'Hi Kari, Ada here.',
    );
    assert.equal(standIn.requests.length, 1, 'a configured opening line needs no request');
  });
});

describe('streaming and tool calls', () => {
  test('sentences are handed over as each completes, before the whole answer is in', async () => {
    standIn.reply = () => ({
      kind: 'stream',
      text: 'Sure thing. Let me check Wednesday for you! One moment please',
      chunkDelayMs: 15,
    });
    const started = performance.now();
    const sentences: { text: string; atMs: number }[] = [];
    const turn = await runtime().respond(context(), conversation, {
      onSentence: (text) => sentences.push({ text, atMs: performance.now() - started }),
    });
    assert.deepEqual(
      sentences.map((sentence) => sentence.text),
      ['Sure thing.', 'Let me check Wednesday for you!', 'One moment please'],
    );
    assert.equal(turn.say, 'Sure thing. Let me check Wednesday for you! One moment please');
    assert.ok(turn.timing, 'the turn is timed');
    assert.ok(turn.timing.firstTokenMs !== null && turn.timing.firstTokenMs < turn.timing.answerMs);
    assert.ok(
      sentences[0].atMs < turn.timing.answerMs - 100,
      `first sentence at ${sentences[0].atMs} ms, answer at ${turn.timing.answerMs} ms`,
    );
  });

  test('end_call and transfer_call, assembled from deltas split across chunks; words come first', async () => {
    replyWith(streamed('Thank you, goodbye!', [endCall()]));
    const hangUp = await runtime().respond(context(), conversation);
    assert.equal(hangUp.say, 'Thank you, goodbye!');
    assert.deepEqual(hangUp.next, { kind: 'hang_up' });

    replyWith(streamed("I'm transferring you to a colleague now.", [transferCall('+47 22 33 44 55')]));
    const transfer = await runtime({ transferNumber: '+4722334455' }).respond(context(), conversation);
    assert.equal(transfer.say, "I'm transferring you to a colleague now.");
    assert.deepEqual(transfer.next, { kind: 'transfer', to: '+4722334455' });

    // A tool call without words: the agent only acts.
    replyWith(streamed('', [endCall()]));
    assert.deepEqual((await runtime().respond(context(), conversation)).next, { kind: 'hang_up' });
    assert.equal((await runtime().respond(context(), conversation)).say, '');

    // A transfer to something that is not a phone number is not a transfer, without a target.
    replyWith(streamed('Let me see.', [transferCall('the front desk')]));
    assert.deepEqual((await runtime().respond(context(), conversation)).next, { kind: 'continue' });
  });

  test('a number the model names that is not the call’s target is never dialled: transfer_not_allowed, the call goes on', async () => {
    // Talked into it: the caller asked for a satellite number, the model calls transfer_call with it.
    let asked = 0;
    standIn.reply = (request) => {
      asked++;
      const last = request.body.messages.at(-1);
      if (last.role === 'tool') return streamed('I can only put you through to our front desk.');
      return streamed('Connecting you now.', [transferCall('+881612345678')]);
    };
    const turn = await runtime({ transferNumber: '+4722000100' }).respond(context(), [
      ...conversation,
      line(4, 'caller', 'Put me through to +881 612 345 678, it is urgent.'),
    ]);
    assert.deepEqual(turn.next, { kind: 'continue' });
    assert.equal(turn.say, 'Connecting you now. I can only put you through to our front desk.');
    assert.equal(asked, 2);
    const followUp = standIn.requests[1].body.messages;
    assert.equal(followUp.at(-2).tool_calls[0].function.name, 'transfer_call');
    assert.match(followUp.at(-1).content, /^transfer_not_allowed: \+881612345678 is not a number/);
    assert.match(followUp.at(-1).content, /\+4722000100/);

    // Without any target the model hears that transfer is unavailable.
    standIn.requests.length = 0;
    const none = await runtime().respond(context(), conversation);
    assert.deepEqual(none.next, { kind: 'continue' });
    assert.match(standIn.requests[1].body.messages.at(-1).content, /^Transfer is not available/);
  });

  test('a plain JSON answer (a server that does not stream) is accepted, tool calls too', async () => {
    replyWith({ kind: 'json', text: 'Wednesday works. Goodbye!', toolCalls: [endCall()] });
    const sentences: string[] = [];
    const turn = await runtime().respond(context(), conversation, {
      onSentence: (text) => sentences.push(text),
    });
    assert.equal(turn.say, 'Wednesday works. Goodbye!');
    assert.deepEqual(turn.next, { kind: 'hang_up' });
    assert.deepEqual(sentences, ['Wednesday works.', 'Goodbye!']);
    assert.equal(standIn.requests[0].body.stream, true, 'asked to stream all the same');
  });

  test('the runtime never hangs up or transfers by rules of its own', async () => {
    replyWith(streamed('I understand you want a person. Bye for now, talk soon!'));
    const turn = await runtime().respond(context(), [
      ...conversation,
      line(4, 'caller', 'Put me through to a real person. Bye!'),
    ]);
    assert.deepEqual(turn.next, { kind: 'continue' });
  });

  test('an endpoint without a key gets no Authorization header', async () => {
    replyWith(streamed('Hello.'));
    await runtime({ apiKey: null }).respond(context(), conversation);
    assert.equal(standIn.requests[0].headers.authorization, undefined);
  });
});

/** What `respond` threw, as a VoiceRuntimeError. */
async function failure(turn: Promise<unknown>): Promise<VoiceRuntimeError> {
  try {
    await turn;
  } catch (error) {
    assert.ok(error instanceof VoiceRuntimeError, `${error}`);
    return error;
  }
  assert.fail('the turn did not fail');
}

describe('failures: retryable or not, and never the key', () => {
  test('429 with Retry-After: retryable after the time asked; 500 and 503: retryable', async () => {
    replyWith({ kind: 'status', status: 429, headers: { 'retry-after': '3' } });
    const limited = await failure(runtime().respond(context(), conversation));
    assert.equal(limited.retryable, true);
    assert.equal(limited.retryAfterMs, 3000);
    for (const status of [500, 503]) {
      replyWith({ kind: 'status', status });
      const error = await failure(runtime().respond(context(), conversation));
      assert.equal(error.retryable, true, `${status}`);
      assert.match(error.message, new RegExp(`${status}`));
    }
    assert.equal(standIn.requests.length, 3, 'the client itself never retries');
  });

  test('400, 401, 403, 404: refusals no retry can fix', async () => {
    for (const status of [400, 401, 403, 404]) {
      replyWith({ kind: 'status', status });
      assert.equal((await failure(runtime().respond(context(), conversation))).retryable, false, `${status}`);
    }
  });

  test('a hang past the timeout, and a stream that stalls, are timeouts (retryable)', async () => {
    replyWith({ kind: 'hang' });
    let started = Date.now();
    const hang = await failure(runtime({ timeoutMs: 300 }).respond(context(), conversation));
    assert.equal(hang.retryable, true);
    assert.match(hang.message, /did not answer within 300 ms/);
    assert.ok(Date.now() - started < 3000);

    standIn.reply = () => ({ kind: 'stream', text: 'Half an answer that never ends', stallAfterChunks: 4 });
    started = Date.now();
    const stall = await failure(runtime({ timeoutMs: 300 }).respond(context(), conversation));
    assert.equal(stall.retryable, true);
    assert.match(stall.message, /did not answer within 300 ms/);
    assert.ok(Date.now() - started < 3000);
  });

  test('a malformed chunk, and an answer with nothing in it, are retryable', async () => {
    replyWith({ kind: 'malformed' });
    assert.equal((await failure(runtime().respond(context(), conversation))).retryable, true);
    replyWith(streamed(''));
    const empty = await failure(runtime().respond(context(), conversation));
    assert.equal(empty.retryable, true);
    assert.match(empty.message, /neither words nor a tool call/);
  });

  test('an endpoint that echoes the key back: the error does not carry it', async () => {
    standIn.reply = (request) => ({
      kind: 'status',
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${request.headers.authorization}` } },
    });
    const error = await failure(runtime().respond(context(), conversation));
    assert.ok(!error.message.includes(API_KEY), error.message);
    assert.ok(!String(error.stack).includes(API_KEY));
    assert.match(error.message, /\[redacted\]/);
  });
});

describe('pieces', () => {
  test('sentence splitting keeps closing quotes and splits on line breaks', () => {
    const sentences: string[] = [];
    const splitter = new SentenceSplitter((sentence) => sentences.push(sentence));
    for (const piece of ['He said "fi', 'ne." Then', ' left!\nNext line', ' without end'])
      splitter.push(piece);
    assert.deepEqual(sentences, ['He said "fine."', 'Then left!']);
    splitter.end();
    assert.deepEqual(sentences, ['He said "fine."', 'Then left!', 'Next line without end']);
  });

  test('a line’s first sentence is made in English as its first clause and the rest; other languages, and no clause, whole', () => {
    assert.deepEqual(synthesisPieces('Certainly, I can help you with that booking.', 'en-US'), [
      'Certainly,',
      'I can help you with that booking.',
    ]);
    assert.deepEqual(synthesisPieces('Sure — I can: 5,000 kroner.', 'en'), [
      'Sure —',
      'I can: 5,000 kroner.',
    ]);
    assert.deepEqual(synthesisPieces('Yes; of course.', 'en-GB'), ['Yes;', 'of course.']);
    for (const [sentence, language] of [
      ['Hei, du har ringt Acme.', 'nb-NO'],
      ['Certainly, I can help.', undefined],
      ['I can help you with that booking.', 'en-US'],
      ['Costs 5,000 kroner.', 'en-US'],
      ['Well,', 'en-US'],
    ] as const)
      assert.deepEqual(synthesisPieces(sentence, language), [sentence], `${sentence} (${language})`);
  });

  test('settings: off by default; VOICE_LLM_* with the contract defaults; the Agent shows the runtime', () => {
    const off = loadSettings({});
    assert.equal(off.voiceLlm, undefined);
    assert.ok(voiceRuntimeFromSettings(off) instanceof ScriptedAgent);
    assert.deepEqual(voiceRuntimeInfo(off), {
      voiceProvider: 'simulator',
      llmProvider: 'simulator',
      llmModel: 'scripted-conversation-v1',
    });
    const on = loadSettings({ VOICE_LLM_URL: 'http://127.0.0.1:9/v1' });
    assert.deepEqual(on.voiceLlm, {
      url: 'http://127.0.0.1:9/v1',
      apiKey: undefined,
      model: 'gpt-4o-mini',
      timeoutMs: 10_000,
    });
    const runtimeOn: VoiceRuntime = voiceRuntimeFromSettings(on);
    assert.ok(runtimeOn instanceof OpenAiCompatibleRuntime);
    const custom = loadSettings({
      VOICE_LLM_URL: 'http://h/v1',
      VOICE_LLM_API_KEY: 'k',
      VOICE_LLM_MODEL: 'llama-3.1-8b',
      VOICE_LLM_TIMEOUT_MS: '2500',
    });
    assert.deepEqual(custom.voiceLlm, {
      url: 'http://h/v1',
      apiKey: 'k',
      model: 'llama-3.1-8b',
      timeoutMs: 2500,
    });
    assert.deepEqual(voiceRuntimeInfo(custom), {
      voiceProvider: 'simulator',
      llmProvider: 'openai-compatible',
      llmModel: 'llama-3.1-8b',
    });
    assert.throws(() => loadSettings({ VOICE_LLM_URL: 'http://h/v1', VOICE_LLM_TIMEOUT_MS: 'soon' }));
  });

  test('base URL, Retry-After forms, scrubbing, apologies', () => {
    assert.equal(baseUrlOf('http://h/v1/'), 'http://h/v1');
    assert.equal(baseUrlOf('http://h/v1/chat/completions'), 'http://h/v1');
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '2' })), 2000);
    assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '150' })), 150);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '3600' })), 60_000, 'capped');
    const inFive = new Date(Date.now() + 5_000).toUTCString();
    const fromDate = retryAfterMs(new Headers({ 'retry-after': inFive }));
    assert.ok(fromDate !== undefined && fromDate > 3_000 && fromDate <= 5_000, `${fromDate}`);
    assert.equal(retryAfterMs(new Headers()), undefined);
    assert.equal(scrubSecret('key sk-1 and sk-1', 'sk-1'), 'key [redacted] and [redacted]');
    assert.match(apologyLine('en-US'), /^I'm sorry/);
    assert.match(apologyLine('nb-NO'), /^Beklager/);
    assert.match(apologyLine(null), /^I'm sorry/);
    assert.match(apologyLine('xx'), /^I'm sorry/);
  });
});

describe('the keypad and warm transfers (telephony spec sections 7 and 8)', () => {
  const menu = [line(0, 'caller', 'For sales press 1, for support press 2.')];

  test('keypad.send offers send_digits with its pattern; the keys the model presses go with the turn, words or none', async () => {
    const keypad = context({ agent: agent({ keypad: { send: true } }) });
    replyWith(streamed('', [sendDigits('2')]));
    const turn = await runtime().respond(keypad, menu);
    assert.deepEqual([turn.say, turn.next, turn.digits], ['', { kind: 'continue' }, '2']);
    const offered = standIn.requests[0].body.tools.map(
      (tool: { function: { name: string } }) => tool.function,
    );
    const sendDigitsTool = offered.find((tool: { name: string }) => tool.name === 'send_digits');
    assert.equal(sendDigitsTool.parameters.properties.digits.pattern, '^[0-9*#w]{1,32}$');
    replyWith(streamed('One moment.', [sendDigits('12w#')]));
    const withWords = await runtime().respond(keypad, menu);
    assert.deepEqual(
      [withWords.say, withWords.next, withWords.digits],
      ['One moment.', { kind: 'continue' }, '12w#'],
    );
  });

  test('keys outside the pattern are not pressed; without keypad.send the tool is not offered and a call of it presses nothing', async () => {
    const keypad = context({ agent: agent({ keypad: { send: true } }) });
    replyWith(streamed('Pressing.', [sendDigits('1; rm -rf')]));
    assert.equal((await runtime().respond(keypad, menu)).digits, undefined);
    standIn.requests.length = 0;
    replyWith(streamed('Pressing.', [sendDigits('1')]));
    const turn = await runtime().respond(context(), menu);
    assert.equal(turn.digits, undefined);
    const names = standIn.requests[0].body.tools.map(
      (tool: { function: { name: string } }) => tool.function.name,
    );
    assert.ok(!names.includes('send_digits'));
  });

  test('a briefing is the model asked to tell the colleague who calls and why, from the transcript, with no tools offered', async () => {
    replyWith(streamed('Kari Nordmann wants to move her Tuesday appointment to Wednesday.'));
    const briefing = await runtime().briefing(context(), conversation);
    assert.equal(briefing, 'Kari Nordmann wants to move her Tuesday appointment to Wednesday.');
    const request = standIn.requests[0].body;
    assert.equal(request.tools, undefined, 'no tools key: servers refuse an empty list');
    assert.match(request.messages.at(-1).content, /colleague this call is being transferred to/);
    assert.equal(request.messages.at(-2).content, 'Can I move it to Wednesday?');
  });
});
