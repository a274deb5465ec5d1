import { VOICES } from '../../../lib/voice-runtime/voices.js';
import { defineRoute, type RouteDefinition } from '../../http/route.js';

const list = defineRoute({
  method: 'GET',
  path: '/voices',
  operationId: 'listVoices',
  summary: 'The voices the runtime offers, for the voice picker.',
  scope: 'agents:read',
  responses: { 200: { description: 'Every voice.' } },
  async handler() {
    return { status: 200, body: { object: 'list', data: VOICES, has_more: false, next_cursor: null } };
  },
});

export const voiceRoutes: RouteDefinition[] = [list];
