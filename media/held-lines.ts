import type { AgentSpeech } from './agent-speech.js';

// The agent's lines held back while the person speaks on before hearing them (media/held-answer.ts
// decides; the agent's voice, agent-voice.ts, plays nothing new while `held`): dropped unheard when
// what the person said is a line of its own, with those begun until the next line is answered.

export class HeldLines {
  /** Nothing that has not begun to play may begin. */
  held = false;
  /** Since `drop`: the first line dropped unheard, and the last line heard before them. */
  private dropped: { index: number | null; heardThrough: number } | null = null;

  /**
   * The held answer is not wanted: its lines (those after the last one heard, none of them heard)
   * go, and the lines begun until `take`. A line that ends the call (its goodbye, `endsCall`) is
   * not dropped: then nothing is, and the lines play (false).
   */
  drop(lines: Iterable<AgentSpeech>, nowMs: number): boolean {
    this.held = false;
    const all = [...lines];
    const heardThrough = Math.max(
      -1,
      ...all.filter((line) => line.firstAudioAt !== null).map((l) => l.index),
    );
    const unheard = all.filter((line) => line.index > heardThrough && !line.interrupted);
    if (unheard.some((line) => line.endsCall)) return false;
    this.dropped = { index: null, heardThrough };
    for (const line of unheard) this.dropIfUnheard(line, nowMs);
    return true;
  }

  /** A line begun: dropped too while a dropped answer's turn is still going on. */
  dropIfUnheard(line: AgentSpeech, nowMs: number): void {
    const dropped = this.dropped;
    if (!dropped || line.index <= dropped.heardThrough || line.firstAudioAt !== null || line.endsCall) return;
    line.interrupt(nowMs);
    dropped.index = Math.min(dropped.index ?? line.index, line.index);
  }

  /** The first line dropped unheard since `drop` (null: none); from now on lines play. */
  take(): number | null {
    const index = this.dropped?.index ?? null;
    this.dropped = null;
    return index;
  }
}
