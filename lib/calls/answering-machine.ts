import type { EntityManager } from '@mikro-orm/postgresql';
import type { AnsweredBy } from '../../db/entities/index.js';
import type { Carrier } from '../carrier/carrier.js';
import { fillVariables } from '../voice-runtime/dynamic-variables.js';
import { judgeFirstWords } from '../voicemail/greeting-words.js';
import { loadCall } from './call-status-changes.js';
import type { TranscriptLine } from './transcript.js';
import { recordLines } from './transcript-rows.js';

// Who answered an outbound phone call (telephony spec section 6), and the message an agent leaves
// on a machine. The workflow (workflows/call/screen.ts) decides when; these steps judge the words,
// store the decision and say the message.

/** A far end that speaks this long without a break (seconds of its own clock) is a machine's greeting. */
export const LONG_GREETING_SECONDS = 4;

/** What the far end said first, and for how long; null when it said nothing. */
export interface FirstWords {
  text: string;
  seconds: number;
}

/**
 * The decision from the first words: a long unbroken greeting or a voicemail phrase is a machine;
 * a phone menu is `unknown` (a machine, but not one to leave a message on: the agent goes on and
 * may press its keys); anything else is a person.
 */
export function answeredByWords(words: FirstWords): AnsweredBy {
  const verdict = judgeFirstWords(words.text);
  if (verdict === 'menu') return 'unknown';
  return verdict === 'machine' || words.seconds >= LONG_GREETING_SECONDS ? 'machine' : 'human';
}

/** Stores the decision once: a retried step keeps the first one. Returns what is stored. */
export async function markAnsweredBy(
  em: EntityManager,
  callId: string,
  answeredBy: AnsweredBy,
): Promise<AnsweredBy> {
  const call = await loadCall(em, callId);
  call.answeredBy ??= answeredBy;
  await em.flush();
  return call.answeredBy;
}

/**
 * The agent's message on an answering machine (its `voicemail.message`, `{{variables}}` filled from
 * the call's metadata), written as its line `index` and played with the hang-up. A retry finds the
 * line written and plays it again from where it stopped.
 */
export async function leaveVoicemail(
  deps: { em: EntityManager; carrier: Pick<Carrier, 'say'> },
  input: { callId: string; index: number; offsetSeconds: number },
): Promise<TranscriptLine> {
  const call = await loadCall(deps.em, input.callId);
  const message = call.agentSnapshot.voicemail?.message;
  if (!message) throw new Error(`call ${input.callId}: the agent has no voicemail message`);
  const line: TranscriptLine = {
    index: input.index,
    role: 'agent',
    text: fillVariables(message, call.metadata),
    offsetSeconds: input.offsetSeconds,
  };
  await recordLines(deps.em, input.callId, [line]);
  await deps.carrier.say({ callId: input.callId, index: line.index, text: line.text, hangUp: true });
  return line;
}
