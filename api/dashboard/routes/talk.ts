import { defineRoute, type RouteDefinition } from '../../http/route.js';
import { talkGateway } from '../talk-gateway.js';

// Whether the test panel can offer Talk (the microphone): only with a media gateway to stream to.
// The page shows the control disabled, with the reason, when it cannot.

const availability = defineRoute({
  method: 'GET',
  path: '/talk',
  operationId: 'talkAvailability',
  summary: "Whether the test panel's Talk (the browser's microphone) is available, and if not why.",
  scope: 'calls:read',
  responses: { 200: { description: '{object: "talk", available, reason}.' } },
  async handler(ctx) {
    const gateway = talkGateway(ctx.state.deps.settings);
    return {
      status: 200,
      body: {
        object: 'talk',
        available: gateway.available,
        reason: gateway.available ? null : gateway.reason,
      },
    };
  },
});

export const talkRoutes: RouteDefinition[] = [availability];
