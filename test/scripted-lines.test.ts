import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AgentSnapshot } from '../db/entities/index.js';
import type { TranscriptLine } from '../lib/calls/transcript.js';
import { ScriptedAgent } from '../lib/voice-runtime/scripted-agent.js';
import type { ConversationContext } from '../lib/voice-runtime/voice-runtime.js';

// The scripted agent (no language model) in the agent's language: the local speech's five
// languages have its everyday lines, so an nb-NO agent greets, answers, thanks and says goodbye in
// Norwegian; another language gets the English ones (docs/voice.md, "Languages").

const inLanguage = (language: string | null): ConversationContext => ({
  agent: { name: 'Ada', language, firstMessage: null } as unknown as AgentSnapshot,
  direction: 'inbound',
  channel: 'phone',
  callFirstMessage: null,
  metadata: {},
  ownNumber: null,
});

const agent = new ScriptedAgent();
const said = (...texts: string[]): TranscriptLine[] =>
  texts.map((text, index) => ({
    index,
    role: index % 2 === 0 ? 'agent' : 'caller',
    text,
    offsetSeconds: index,
  }));

test('an nb-NO agent introduces itself, answers, takes thanks and says goodbye in Norwegian', async () => {
  const norwegian = inLanguage('nb-NO');
  // A call that came in: the caller speaks first, then the agent says who it is.
  const first = await agent.respond(norwegian, [
    { index: 0, role: 'caller', text: 'Hallo?', offsetSeconds: 0 },
  ]);
  assert.equal(first.say, 'Hei, dette er Ada. Hva kan jeg hjelpe deg med i dag?');
  const answer = await agent.respond(norwegian, said('Hei', 'Jeg vil bestille en time i morgen.'));
  assert.deepEqual(answer, { say: 'Flott. Skal jeg bekrefte det for deg?', next: { kind: 'continue' } });
  const thanked = await agent.respond(norwegian, said('Hei', 'Ja, takk.'));
  assert.equal(thanked.say, 'Bare hyggelig! Er det noe annet jeg kan hjelpe deg med?');
  const bye = await agent.respond(norwegian, said('Hei', 'Nei, ha det bra.'));
  assert.deepEqual(bye, { say: 'Takk for samtalen. Ha det bra!', next: { kind: 'hang_up' } });
});

test('Swedish, Danish and German have theirs; goodbyes are heard in each', async () => {
  for (const [language, goodbye, line] of [
    ['sv-SE', 'Hej då!', 'Tack för samtalet. Hej då!'],
    ['da-DK', 'Farvel.', 'Tak for samtalen. Farvel!'],
    ['de-DE', 'Tschüss!', 'Vielen Dank für Ihre Zeit. Auf Wiedersehen!'],
  ]) {
    const answer = await agent.respond(inLanguage(language), said('Hallo', goodbye));
    assert.deepEqual(answer, { say: line, next: { kind: 'hang_up' } }, language);
  }
});

test('English, no language, and a language without lines: the English ones', async () => {
  for (const language of ['en-US', null, 'fr-FR']) {
    const first = await agent.respond(inLanguage(language), [
      { index: 0, role: 'caller', text: 'Hello?', offsetSeconds: 0 },
    ]);
    assert.equal(first.say, 'Hello, this is Ada. How can I help you today?', String(language));
    const answer = await agent.respond(inLanguage(language), said('Hello', 'I need a new appointment.'));
    assert.equal(answer.say, 'Great. Shall I go ahead and confirm that for you?');
  }
});
