// The two speech ports of the media gateway (spec voice-media-v1 section 4): speech-to-text and
// text-to-speech. The adapters are OpenAI-compatible HTTP clients (openai-speech-to-text.ts,
// openai-text-to-speech.ts); from-settings.ts builds them from VOICE_STT_* / VOICE_TTS_*.

/** Mono 16-bit PCM. */
export interface Pcm {
  sampleRate: number;
  samples: Int16Array;
}

export interface SpeechVoice {
  id: string;
  name: string;
  /** BCP 47 tag of the language it speaks. */
  language: string;
}

/** Words heard, with how sure the recogniser was of them when it says. */
export interface HeardWords {
  text: string;
  /**
   * Whisper's average log probability per token of the last segment it decoded (the words at the
   * end of the audio; OpenAI's verbose_json `avg_logprob`, 0 = certain); absent when not given.
   */
  avgLogprob?: number;
}

export interface SpeechToText {
  /** The words spoken in `audio`; '' when nothing was said. */
  transcribe(audio: Pcm, options: { language: string; signal?: AbortSignal }): Promise<string>;
  /** The same words and the recogniser's confidence (verbose_json); absent: the adapter cannot ask for it. */
  transcribeScored?(audio: Pcm, options: { language: string; signal?: AbortSignal }): Promise<HeardWords>;
}

export interface TextToSpeech {
  /**
   * `text` spoken by `voice`. A voice the server does not have: its first voice of `language` (BCP 47,
   * matched by its primary subtag: the agent's language chooses the voice), else its default voice.
   */
  synthesize(text: string, options: { voice: string; language?: string; signal?: AbortSignal }): Promise<Pcm>;
  /** The voices the server really has. */
  voices(options?: { signal?: AbortSignal }): Promise<SpeechVoice[]>;
}

/** retryable: a passing failure (429, 5xx, timeout, connection refused). The message never carries a secret. */
export class SpeechError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'SpeechError';
  }
}
