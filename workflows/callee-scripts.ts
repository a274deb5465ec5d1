import { benchAnswer } from './bench-answers.js';

// The simulated far end's behaviour per scenario (operations contract, section 4), chosen by the
// last four digits of the number it plays: the person an outbound call rings (calleeScript), or
// the person who calls in (callerScript, section 5). Deterministic data only: used inside a workflow.

export type DialBehaviour =
  | { kind: 'busy' }
  | { kind: 'not_connected' }
  | { kind: 'never_answers' }
  | { kind: 'declines'; afterRingingSeconds: number }
  | { kind: 'answers' };

/** An answering machine (scenario 3001): its greeting from pick-up, a beep, then it records. */
export interface AnsweringMachine {
  greeting: string;
  /** Seconds of its beep after the greeting; null: no beep (it records once the greeting ends). */
  beepSeconds: number | null;
  /** Seconds it records before it hangs up. */
  recordsSeconds: number;
}

/** A phone menu (scenario 3002): its prompt from pick-up; after a key press the person of `replies` speaks. */
export interface PhoneMenu {
  prompt: string;
  /** Said when it hears words instead of a key. */
  again: string;
  /** Seconds after the prompt without a key before it hangs up. */
  noKeySeconds: number;
}

export interface CalleeScript {
  dial: DialBehaviour;
  /** Answered by a machine instead of a person. */
  machine?: AnsweringMachine;
  /** Answered by a phone menu; `firstWords` and `replies` are the person it puts the call through to. */
  menu?: PhoneMenu;
  /** A person who says this at pick-up (then waits for the agent) instead of waiting silently. */
  pickUpWords?: string;
  /**
   * After their last reply they hold on (a person being put through) instead of hanging up: until
   * they are handed over, or a minute passes without a word from the agent.
   */
  holdsOn?: boolean;
  /** What the person says after hearing each agent line, in order; when it runs out they hang up. */
  replies: string[];
  /** Said when the agent stays silent after the call connects (the person speaks first). */
  firstWords: string;
}

const FRIENDLY: string[] = [
  'Oh, hi. Yes, I have a minute. Go ahead.',
  'Yes, that works for me. Could you send me a confirmation by email?',
  'Perfect, thank you so much, that was really helpful!',
  'No, that is all. Bye!',
];

const SCRIPTS: Record<string, CalleeScript> = {
  '1001': { dial: { kind: 'busy' }, replies: [], firstWords: 'Hello?' },
  '1002': { dial: { kind: 'never_answers' }, replies: [], firstWords: 'Hello?' },
  '1003': { dial: { kind: 'declines', afterRingingSeconds: 6 }, replies: [], firstWords: 'Hello?' },
  '1004': { dial: { kind: 'not_connected' }, replies: [], firstWords: 'Hello?' },
  '2002': {
    dial: { kind: 'answers' },
    replies: ['Hi. Yes?', "Honestly, I'd rather talk to a real person. Can you put me through to someone?"],
    firstWords: 'Hello?',
    holdsOn: true,
  },
  '2003': {
    dial: { kind: 'answers' },
    replies: [
      'Who is this? What do you want?',
      'This is unacceptable. I have been waiting for weeks and nobody has fixed my problem. I want to talk to a manager.',
      'Fine. But I am really not happy about this.',
    ],
    firstWords: 'Yes? Hello?',
  },
  '2004': { dial: { kind: 'answers' }, replies: [], firstWords: 'Hello?' },
  '3001': {
    dial: { kind: 'answers' },
    machine: {
      greeting:
        "Hi, you have reached Kari Nordmann. I can't take your call right now, please leave a message after the tone.",
      beepSeconds: 0.5,
      recordsSeconds: 60,
    },
    replies: [],
    firstWords: '',
  },
  '3002': {
    dial: { kind: 'answers' },
    menu: {
      prompt: 'For sales press 1, for support press 2.',
      again: 'Sorry. For sales press 1, for support press 2.',
      noKeySeconds: 10,
    },
    replies: FRIENDLY,
    firstWords: 'Hello, this is Anna. How can I help you?',
  },
};

export function calleeScript(number: string): CalleeScript {
  const bench = benchAnswer(number);
  if (bench) return benchScript(bench);
  return SCRIPTS[number.slice(-4)] ?? { dial: { kind: 'answers' }, replies: FRIENDLY, firstWords: 'Hello?' };
}

/** An answer of the answering-machine bench (bench-answers.ts): it ends once who answered is known. */
function benchScript(answer: NonNullable<ReturnType<typeof benchAnswer>>): CalleeScript {
  if ('machine' in answer) {
    const { greeting, beep } = answer.machine;
    return {
      dial: { kind: 'answers' },
      machine: { greeting, beepSeconds: beep ? 0.5 : null, recordsSeconds: 60 },
      replies: [],
      firstWords: '',
    };
  }
  return {
    dial: { kind: 'answers' },
    ...(answer.person ? { pickUpWords: answer.person } : {}),
    replies: [],
    firstWords: 'Hello?',
  };
}

/** An inbound caller's wishes; the agent's opening line (or its introduction) comes first. */
const CALLING_TO_BOOK: string[] = [
  'Hi, I would like to book an appointment for next Tuesday morning.',
  'Yes, please. Could you send me a confirmation by email?',
  'Perfect, thank you so much, that was really helpful!',
  'No, that is all. Bye!',
];

/** Calls that come in: the `2xxx` rows and the default of section 4 (a dial outcome makes no sense here). */
const CALLER_SCRIPTS: Record<string, CalleeScript> = {
  '2002': {
    dial: { kind: 'answers' },
    replies: ["Hi. Honestly, I'd rather talk to a real person. Can you put me through to someone?"],
    firstWords: 'Hello?',
  },
  '2003': {
    dial: { kind: 'answers' },
    replies: [
      'This is unacceptable. I have been waiting for weeks for my refund and nobody has fixed my problem. I want to talk to a manager.',
      'Fine. But I am really not happy about this.',
    ],
    firstWords: 'Hello? Is anybody there?',
  },
  '2004': { dial: { kind: 'answers' }, replies: [], firstWords: 'Hello?' },
};

/**
 * The person who calls in, by the last four digits of their number (or a web call's label). When
 * the agent listens first they say `firstWords`; each agent line gets the next reply.
 */
export function callerScript(number: string): CalleeScript {
  return (
    CALLER_SCRIPTS[number.slice(-4)] ?? {
      dial: { kind: 'answers' },
      replies: CALLING_TO_BOOK,
      firstWords: 'Hello?',
    }
  );
}
