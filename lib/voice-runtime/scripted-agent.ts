import { isKeypadLine } from '../calls/keypad-line.js';
import type { TranscriptLine } from '../calls/transcript.js';
import { configuredOpeningLine, introduction } from './opening-line.js';
import { confirmIn, goodbyeIn, SAYS_GOODBYE, THANKS, welcomeIn } from './scripted-lines.js';
import { transferTargets } from './transfer-target.js';
import type { AgentTurn, ConversationContext, VoiceRuntime } from './voice-runtime.js';
import { briefingFromTranscript } from './warm-transfer-lines.js';

// The default voice runtime: a rule-based agent that reacts to what the other person said. It
// stands in for the speech and language-model stack until a real one is configured, and only
// sees the transcript (never the simulator's scenario).

/** After this many agent lines the agent wraps the call up, so no conversation runs forever. */
const MAX_AGENT_LINES = 10;

const WANTS_MANAGER = /\b(manager|supervisor|complain|complaint|unacceptable)\b/i;
const WANTS_PERSON = /\b(real person|human|someone|somebody|put me through|operator)\b/i;
const ASKS_TO_SEND = /\b(send|email|e-mail|text) me\b/i;
/**
 * A phone menu's first choice: "For sales press 1", or "press one" as a transcription may write it
 * (Whisper writes the digit or the word depending on how the audio was cut).
 */
const MENU_CHOICE = /\bpress (\d|zero|one|two|three|four|five|six|seven|eight|nine)\b/i;
/** The digits as English words, in order (index = digit). */
export const DIGIT_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

/** The key a menu's first choice names, or null when `heard` is no menu. */
export function menuChoice(heard: string): string | null {
  const named = MENU_CHOICE.exec(heard)?.[1]?.toLowerCase();
  if (named === undefined) return null;
  return /^\d$/.test(named) ? named : String(DIGIT_WORDS.indexOf(named));
}
/** What the agent says when the person asks for a human and the call has nowhere to transfer to. */
export const TRANSFER_UNAVAILABLE_LINE =
  "I'm sorry, I can't put you through to a person on this call, but I'm happy to help you myself.";

export class ScriptedAgent implements VoiceRuntime {
  readonly runsInProcess = true;

  /** `transferNumber` is TRANSFER_NUMBER: where a transfer goes when the call's metadata names none. */
  constructor(private readonly options: { transferNumber?: string | null } = {}) {}

  async openingLine(context: ConversationContext): Promise<string | null> {
    const configured = configuredOpeningLine(context);
    return configured === undefined ? introduction(context) : configured;
  }

  /** Who is calling and why, from the caller's last words of substance. */
  async briefing(context: ConversationContext, transcript: TranscriptLine[]): Promise<string> {
    return briefingFromTranscript(context.agent.name, null, transcript);
  }

  async respond(context: ConversationContext, transcript: TranscriptLine[]): Promise<AgentTurn> {
    const heard = transcript.at(-1)?.text ?? '';
    // Keys pressed are not words said: the agent has still to say who it is after a phone menu.
    const agentLines = transcript.filter((line) => line.role === 'agent' && !isKeypadLine(line.text)).length;
    // A phone menu, and the agent may press keys: the scripted agent cannot weigh the choices, so it
    // takes the first (the model reads them against its instructions).
    const choice = context.agent.keypad?.send ? menuChoice(heard) : null;
    if (choice) return { say: '', next: { kind: 'continue' }, digits: choice };
    // The other person spoke first: the agent has not said who it is yet.
    if (agentLines === 0) {
      return { say: introduction(context), next: { kind: 'continue' } };
    }
    if (agentLines >= MAX_AGENT_LINES) {
      return { say: 'I have to wrap up now. Thank you for your time, goodbye!', next: { kind: 'hang_up' } };
    }
    if (WANTS_MANAGER.test(heard)) {
      return {
        say: "I'm sorry about this. I have escalated your complaint, and a manager will call you back within one business day.",
        next: { kind: 'continue' },
      };
    }
    if (WANTS_PERSON.test(heard)) {
      // The scripted agent cannot weigh descriptions: it takes the first.
      const to = transferTargets(context, this.options.transferNumber ?? null)[0]?.number;
      if (to)
        return { say: "Of course. I'm transferring you to a colleague now.", next: { kind: 'transfer', to } };
      return { say: TRANSFER_UNAVAILABLE_LINE, next: { kind: 'continue' } };
    }
    const { language } = context.agent;
    if (SAYS_GOODBYE.test(heard)) return { say: goodbyeIn(language), next: { kind: 'hang_up' } };
    if (ASKS_TO_SEND.test(heard)) {
      return {
        say: "Absolutely, I'll send you a confirmation by email right away.",
        next: { kind: 'continue' },
      };
    }
    if (THANKS.test(heard)) return { say: welcomeIn(language), next: { kind: 'continue' } };
    return { say: confirmIn(language), next: { kind: 'continue' } };
  }
}
