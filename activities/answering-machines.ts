import type { EntityManager } from '@mikro-orm/postgresql';
import type { AnsweredBy } from '../db/entities/index.js';
import type { Orm } from '../db/orm.js';
import {
  answeredByWords,
  type FirstWords,
  leaveVoicemail,
  markAnsweredBy,
} from '../lib/calls/answering-machine.js';
import type { TranscriptLine } from '../lib/calls/transcript.js';
import type { Carrier } from '../lib/carrier/carrier.js';
import { heartbeating } from './heartbeat.js';

// The call workflow's steps for answering machines (workflows/call/screen.ts). The words are judged
// here, not in the workflow: a better judge later must not change what a replayed history decided.

export function createAnsweringMachineActivities(deps: { orm: Orm; carrier: Carrier }) {
  const em = () => deps.orm.em.fork() as EntityManager;
  return heartbeating({
    /**
     * Stores who answered: `answeredBy` when the workflow knows it (the far end was silent at
     * answer, or still speaking when the decision was due), else the judgement of `firstWords`.
     */
    async judgeAnswer(input: {
      callId: string;
      answeredBy?: AnsweredBy;
      firstWords?: FirstWords;
    }): Promise<AnsweredBy> {
      const answeredBy =
        input.answeredBy ?? (input.firstWords ? answeredByWords(input.firstWords) : 'unknown');
      return markAnsweredBy(em(), input.callId, answeredBy);
    },

    /** The agent's voicemail message, written and played with the hang-up. */
    async leaveVoicemail(input: {
      callId: string;
      index: number;
      offsetSeconds: number;
    }): Promise<TranscriptLine> {
      return leaveVoicemail({ em: em(), carrier: deps.carrier }, input);
    },
  });
}

export type AnsweringMachineActivities = ReturnType<typeof createAnsweringMachineActivities>;
