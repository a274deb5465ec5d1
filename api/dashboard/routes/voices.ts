import type { Settings } from '../../../lib/settings.js';
import { speechFromSettings } from '../../../lib/speech/from-settings.js';
import { SpeechError, type TextToSpeech } from '../../../lib/speech/speech-ports.js';
import { languageFirst, voicePickerList } from '../../../lib/voice-runtime/voices.js';
import { upstreamUnavailable } from '../../http/errors.js';
import { defineRoute, type RouteDefinition } from '../../http/route.js';
import { BCP47_PATTERN } from '../../schemas/bcp47.js';

const list = defineRoute({
  method: 'GET',
  path: '/voices',
  operationId: 'listVoices',
  summary:
    "The voices the configured text-to-speech service has (else the simulator's), for the voice picker.",
  scope: 'agents:read',
  query: {
    type: 'object',
    properties: {
      language: {
        type: 'string',
        maxLength: 20,
        pattern: BCP47_PATTERN,
        description:
          'The agent’s language: its voices come first (by primary subtag), in the service’s order.',
      },
    },
    additionalProperties: false,
  },
  responses: {
    200: { description: 'Every voice.' },
    503: { description: 'The text-to-speech service could not be asked for its voices.' },
  },
  async handler(ctx, { query }) {
    const listed = await voicePickerList(textToSpeechOf(ctx.state.deps.settings)).catch((error: unknown) => {
      if (error instanceof SpeechError)
        throw upstreamUnavailable('The text-to-speech service did not list its voices.');
      throw error;
    });
    const data = query.language ? languageFirst(listed, query.language) : listed;
    return { status: 200, body: { object: 'list', data, has_more: false, next_cursor: null } };
  },
});

/** One client per process (it keeps the service's voice list for a few minutes). */
let tts: { of: Settings['speech']['tts']; client: TextToSpeech | undefined } | undefined;
function textToSpeechOf(settings: Pick<Settings, 'speech'>): TextToSpeech | undefined {
  if (!tts || tts.of !== settings.speech.tts)
    tts = { of: settings.speech.tts, client: speechFromSettings(settings).tts };
  return tts.client;
}

export const voiceRoutes: RouteDefinition[] = [list];
