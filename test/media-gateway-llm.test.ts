import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent } from '../db/entities/index.js';
import { MediaStreamsClient } from '../lib/media/media-streams-client.js';
import { loadSettings } from '../lib/settings.js';
import { callProgressQuery } from '../lib/temporal/call-messages.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { createFixture, type Fixture } from './support/api.js';
import { createAgentFixture } from './support/call-fixtures.js';
import { type CallStack, startCallStack, waitForCallEnd } from './support/call-stack.js';
import {
  type ChatStandIn,
  endCall,
  startChatStandIn,
  streamed,
} from './support/chat-completions-stand-in.js';
import { signalsReceived } from './support/history-text.js';
import { startTestMediaGateway, type TestMediaGateway, testMediaSettings } from './support/media-gateway.js';
import { startTestSpeech, type TestSpeech } from './support/speech-kit.js';
import { endOfSpeech } from './support/test-audio.js';
import { callTo, orAfter } from './support/wait-for.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

// A spoken call on the language-model runtime (VOICE_LLM_URL, here a local OpenAI-compatible
// stand-in streaming its answer slowly): the agent's first sentence is synthesised and played while
// the rest of the answer is still streaming in (`onSentence` through the workers' carrier to the
// gateway), and the model's end_call tool hangs up after the last line has played. The model is
// asked once for the line, whether the answer was asked during the caller's pause (preemptive
// generation) or after the turn: which of the two depends on the real transcription's speed on
// this machine, so the rule itself is tested on fakes with the order set (test/media-path.test.ts).

const TOKEN = 'media-llm-test-token';
let stack: CallStack;
let gateway: TestMediaGateway;
let speech: TestSpeech;
let standIn: ChatStandIn;
let recordingsDir: string;
let owner: Fixture;

const FIRST = 'Of course, I can email you the details.';
const REST = 'Before I do, is the address we have on file for your booking still the right one to use today?';

before(async () => {
  recordingsDir = await mkdtemp(path.join(tmpdir(), 'media-llm-'));
  standIn = await startChatStandIn((request) => {
    const messages = request.body.messages as { role: string; content: string }[];
    const heard = (messages.findLast((m) => m.role === 'user')?.content ?? '').toLowerCase();
    // Whisper writes it "Goodbye", "Good bye", "Good-bye" (or, cut short, "Bye").
    if (/good\W?bye|\bbye\b/.test(heard)) return { kind: 'stream', text: 'Goodbye!', toolCalls: [endCall()] };
    // A few characters every 250 ms: the whole answer takes about ten seconds, its first sentence
    // about three, which leaves the first sentence's synthesis time to play before the answer is
    // whole even on a loaded machine.
    return { kind: 'stream', text: `${FIRST} ${REST}`, chunkDelayMs: 250 };
  });
  const defaults = loadSettings({});
  [stack, speech] = await Promise.all([
    startCallStack({
      prefix: 'media-llm',
      simTimeScale: 1,
      settings: {
        media: testMediaSettings(defaults.media, { streamsToken: TOKEN }),
        recordingsDir,
        voiceLlm: { url: standIn.url, apiKey: 'sk-test', model: 'stand-in-model', timeoutMs: 30_000 },
        // The agent's tool listens on 127.0.0.1.
        webhooksAllowPrivateTargets: true,
      },
    }),
    startTestSpeech(),
  ]);
  gateway = await startTestMediaGateway(stack, speech);
  owner = await createFixture(stack.db.orm, { requestsPerSecond: 10_000 });
});

after(async () => {
  await gateway?.close();
  await stack?.close();
  await speech?.close();
  await standIn?.close();
  if (recordingsDir) await rm(recordingsDir, { recursive: true, force: true });
});

test('the model is asked once for a line; its first sentence plays while the model is still answering; end_call hangs up after the goodbye', {
  timeout: 180_000,
}, async () => {
  const agent = await createAgentFixture(stack.db.orm, {
    workspaceId: owner.workspaceId,
    firstMessage: 'Hello, Acme bookings.',
  });
  const [ask, bye] = await Promise.all([
    speech.callerSays('Can you send me the details by email?').then(endOfSpeech),
    speech.callerSays('No, that is all. Goodbye.'),
  ]);
  const client = await MediaStreamsClient.connect(gateway.streamsUrl);
  client.start({ to: agent.number, from: '+4791234580', token: TOKEN });
  const call = await callTo(stack.db.orm, agent.number);
  await client.agentFinished();
  const askedAt = performance.now();
  await client.say(ask);
  const answerStarts = await client.agentStarts(askedAt + 100);
  await client.agentFinished({ after: answerStarts, quietMs: 1200 });
  // The first sentence has played while the model still streams; the rest follows once it is made.
  const restStarts = await client.agentStarts(performance.now());
  await client.agentFinished({ after: restStarts, quietMs: 1200 });
  const answer = await speech.transcribe(client.agentAudio(answerStarts));
  // Its first sentence and the rest (REST; Whisper once heard its "is the address" as "as either dress").
  assert.match(answer, /email/, answer);
  // Whisper has heard Piper's "for your booking still" as "for your book and still": "book" is enough.
  assert.match(answer, /\bbook/, answer);

  await client.say(bye);
  const closed = await orAfter(client.closed, 60_000, null);
  const heard = standIn.requests.map(
    (r) => r.body.messages.findLast((m: { role: string }) => m.role === 'user')?.content,
  );
  assert.equal(closed?.code, 1000, `the call did not hang up; the model heard ${JSON.stringify(heard)}`);
  const ended = await waitForCallEnd(stack.api.client(owner.secret), call.id);
  assert.equal(ended.end_reason, 'agent_hangup');
  // Asked once: an answer begun at the pause was taken by the turn, not asked again.
  const emailRequests = standIn.requests.filter((r) =>
    /email/i.test(r.body.messages.findLast((m: { role: string }) => m.role === 'user')?.content ?? ''),
  );
  assert.equal(emailRequests.length, 1, JSON.stringify(heard));

  const progress = await stack.client.workflow.getHandle(callWorkflowId(call.id)).query(callProgressQuery);
  const turn = progress.agentTurns.find((t) => t.fromSpeechEnd);
  assert.ok(turn?.fromSpeechEnd, JSON.stringify(progress.agentTurns));
  const { transcriptMs, firstTokenMs, firstAudioMs } = turn.fromSpeechEnd;
  // From the end of speech: the moment the runtime was asked, and the moment its answer was whole.
  const asked = firstTokenMs - (turn.firstTokenMs ?? 0);
  const answerWhole = asked + turn.answerMs;
  assert.ok(
    firstAudioMs !== null && firstAudioMs < answerWhole - 500,
    JSON.stringify({ transcriptMs, firstTokenMs, firstAudioMs, answerWhole }),
  );
});

test('a tool call on a spoken call: the line while waiting is heard, then the answer with its result', {
  timeout: 180_000,
}, async () => {
  const tool = await startWebhookReceiver();
  const scripted = standIn.reply;
  try {
    // "delivered": the local Whisper heard Piper's "your order has shipped." as "…has shit." in 8 of 20 syntheses.
    tool.answer = () => ({ status: 200, body: '{"state":"delivered"}', delayMs: 500 });
    const agent = await createAgentFixture(stack.db.orm, {
      workspaceId: owner.workspaceId,
      firstMessage: 'Hello, Acme orders.',
    });
    await stack.db.orm.em.fork().nativeUpdate(
      Agent,
      { id: agent.agentId },
      {
        tools: [
          {
            name: 'order_status',
            description: "The state of the caller's order.",
            parameters: { type: 'object', properties: {} },
            url: `${tool.url}/orders`,
            timeoutSeconds: 5,
            speakWhileWaiting: 'One moment, let me check that for you.',
          },
        ],
      },
    );
    standIn.reply = (request) => {
      const last = request.body.messages.at(-1);
      if (last.role === 'tool')
        return streamed(`Good news: your order has ${JSON.parse(last.content).state}.`);
      if (last.role === 'user' && /order/i.test(last.content)) {
        return streamed('', [{ name: 'order_status', arguments: '{}' }]);
      }
      return scripted(request);
    };
    const [ask, bye] = await Promise.all([
      speech.callerSays('Where is my order?'),
      speech.callerSays('No, that is all. Goodbye.'),
    ]);
    const client = await MediaStreamsClient.connect(gateway.streamsUrl);
    client.start({ to: agent.number, from: '+4791234581', token: TOKEN });
    const call = await callTo(stack.db.orm, agent.number);
    await client.agentFinished();
    const askedAt = performance.now();
    await client.say(ask);
    // The line while waiting plays at once; the answer follows as soon as the tool has answered
    // (the two may run together): all of it is heard, in that order.
    const waitingStarts = await client.agentStarts(askedAt + 100);
    await client.agentFinished({ after: waitingStarts, quietMs: 3000 });
    const heard = await speech.transcribe(client.agentAudio(waitingStarts));
    assert.match(heard, /(moment|check)[\s\S]*delivered/i, heard);
    assert.equal(tool.requests.length, 1);

    await client.say(bye);
    const closed = await orAfter(client.closed, 60_000, null);
    // What the model was asked, each request's last line: says where a call that did not end stopped.
    const asked = standIn.requests.slice(-6).map((r) => r.body.messages.at(-1)?.content);
    assert.equal(
      closed?.code,
      1000,
      `the call did not hang up; the model was asked ${JSON.stringify(asked)}`,
    );
    const ended = await waitForCallEnd(stack.api.client(owner.secret), call.id);
    assert.equal(ended.end_reason, 'agent_hangup');
    // The gateway took the question, handed the turns back for the tool (the workflow ran it and
    // the answer with its result), took them again and answered the goodbye.
    const history = await stack.client.workflow.getHandle(callWorkflowId(call.id)).fetchHistory();
    assert.deepEqual(
      signalsReceived(history).filter((name) => name !== 'carrierCallback'),
      ['gatewayTurn', 'gatewayTurn'],
    );
    const listed = await stack.api.client(owner.secret).get(`/calls/${call.id}/tool-calls`);
    assert.deepEqual(
      listed.body.data.map((row: { name: string; status: string }) => [row.name, row.status]),
      [['order_status', 'succeeded']],
    );
  } finally {
    standIn.reply = scripted;
    await tool.close();
  }
});
