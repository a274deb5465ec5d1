import type { TranscriptLine } from '../calls/transcript.js';
import type { CallAnalysisResult, CallAnalyzer, CallOutcome, TranscriptReading } from './analyzer.js';
import { type CallEnding, knownOutcome, substantiveCallerLines } from './known-outcome.js';

// The default analysis: how the call ended where that settles the outcome (known-outcome.ts),
// else rules over what was said. It sees only the transcript and the ending, so a real
// conversation and a simulated one are judged the same way.

const ESCALATED = /\bescalat(e|ed|ing)\b|\b(manager|supervisor)\b/i;
const AGREED = /\b(thank|thanks|perfect|great|works for me|sounds good|that's fine|yes, please)\b/i;
const POSITIVE =
  /\b(thank|thanks|perfect|great|helpful|(?<!not )happy|wonderful|works for me|sounds good)\b/gi;
const NEGATIVE =
  /\b(unacceptable|not happy|unhappy|angry|terrible|awful|ridiculous|frustrat\w*|waiting for weeks|complain\w*)\b/gi;
/** Promises the agent made: "I'll send you …", "a manager will call you back …". */
const PROMISE = /\b(?:I'll|I will|we'll|we will|(?:a|the) (manager|supervisor|colleague) will)\s+([^.!?]+)/gi;

export class TranscriptAnalyzer implements CallAnalyzer {
  readonly runsInProcess = true;

  async analyze(transcript: TranscriptLine[], ending: CallEnding): Promise<TranscriptReading> {
    const agent = transcript.filter((line) => line.role === 'agent').map((line) => line.text);
    const caller = transcript.filter((line) => line.role === 'caller').map((line) => line.text);
    const known = knownOutcome(transcript, ending);
    const read = known ? null : outcomeOf(agent, caller, substantiveCallerLines(transcript));
    const sentiment = sentimentOf(caller);
    const actionItems = actionItemsOf(agent);
    return {
      summary: summaryOf(agent.length, caller.length, known?.sentence ?? outcomeSentence(read), actionItems),
      outcome: known ? known.outcome : read,
      sentiment,
      action_items: actionItems,
    };
  }
}

/**
 * The outcome by the words, when the record settles none. `transferred` is never read from words
 * ("I'm transferring you"): the record says it once the transfer connected (known-outcome.ts), and
 * a transfer that failed was none.
 */
function outcomeOf(agent: string[], caller: string[], substantive: string[]): CallOutcome | null {
  if ([...agent, ...caller].some((text) => ESCALATED.test(text))) return 'escalated';
  if (substantive.length === 0) return 'abandoned';
  if (substantive.some((text) => AGREED.test(text))) return 'resolved';
  return null;
}

function sentimentOf(caller: string[]): CallAnalysisResult['sentiment'] {
  if (caller.length === 0) return null;
  const text = caller.join(' ');
  const positive = text.match(POSITIVE)?.length ?? 0;
  const negative = text.match(NEGATIVE)?.length ?? 0;
  if (negative > positive) return 'negative';
  if (positive > negative) return 'positive';
  return 'neutral';
}

function actionItemsOf(agent: string[]): string[] {
  const items: string[] = [];
  for (const text of agent) {
    for (const match of text.matchAll(PROMISE)) {
      const who = match[1] ? `${capitalize(match[1])} to ` : '';
      const what = match[2]
        .replace(/\byou\b/gi, 'the customer')
        .replace(/\byour\b/gi, "the customer's")
        .trim();
      const item = who ? `${who}${what}` : capitalize(what);
      if (!items.includes(item)) items.push(item);
    }
  }
  return items;
}

const OUTCOME_SENTENCES: Record<CallOutcome, string> = {
  transferred: 'The caller asked for a person and the agent transferred the call.',
  escalated: 'The caller was dissatisfied and the agent escalated the matter.',
  abandoned: 'The other person ended the call before saying anything of substance.',
  resolved: "The agent handled the request and the caller's needs were met.",
};

function outcomeSentence(outcome: CallOutcome | null): string {
  return outcome ? OUTCOME_SENTENCES[outcome] : 'The call ended without a clear outcome.';
}

function summaryOf(agentLines: number, callerLines: number, outcome: string, actionItems: string[]): string {
  const parts = [`A conversation of ${agentLines} agent and ${callerLines} caller lines.`, outcome];
  if (actionItems.length) parts.push(`Follow-up: ${actionItems.join('; ')}.`);
  return parts.join(' ');
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
