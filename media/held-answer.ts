import type { CallerSpeech } from '../lib/temporal/call-messages.js';
import { isBackchannel } from '../lib/voice-runtime/backchannel.js';
import type { AgentVoice } from './agent-voice.js';

// The person speaks on before hearing the agent's answer to them: an afterthought ("I need a
// taxi." … "To the airport at six."), a turn the end-of-turn rule ended at the pause after a whole
// sentence. The answer waits, not played over them, while they speak (the agent's voice holds it:
// agent-voice.ts). What they then said decides: words that are a line of their own drop the
// waiting answer unheard, and the next answer, asked with both lines, is the one heard (the dropped
// answer's transcript line goes, as a barge-in's keeps only what was heard: a line never heard is
// no line); no words, a backchannel ("okay") or words that cannot be heard let it play. LiveKit's
// agents do the same when the user speaks before the reply has played. It matters while the
// gateway's turn loop answers a line (user-turns.ts): the workflow's answers come far later.

export class HeldAnswer {
  private holding = false;

  constructor(private readonly voice: Pick<AgentVoice, 'speaking' | 'hold' | 'dropHeld' | 'takeDropped'>) {}

  /**
   * The person is speaking (300 ms of it: a shorter sound, which may end without a turn, holds
   * nothing) while an answer to them is on its way: unless the agent is already heard, it waits.
   */
  speaking(): void {
    if (this.holding || this.voice.speaking()) return;
    this.holding = true;
    this.voice.hold(true);
  }

  /**
   * What the person said (its transcription; null: it could not be heard). With an answer waiting:
   * a line drops it, anything else lets it play and is no line (`go_on`). Else every word is a line.
   */
  heard(words: string | null): 'line' | 'go_on' {
    if (!this.holding) return 'line';
    this.holding = false;
    if (words === null || isBackchannel(words)) {
      this.voice.hold(false);
      return 'go_on';
    }
    this.voice.dropHeld();
    return 'line';
  }

  /**
   * For the person's next line, once the answer before it is over: the agent line dropped unheard
   * (it keeps no words, `spokenText` ''), unless the line carries a barge-in of its own.
   */
  withDropped(speech: CallerSpeech): CallerSpeech {
    const index = this.voice.takeDropped();
    if (index === null || speech.interrupted) return speech;
    return { ...speech, interrupted: { index, spokenText: '' } };
  }
}
