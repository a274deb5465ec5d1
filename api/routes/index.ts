import type { RouteDefinition } from '../http/route.js';
import { agentRoutes } from './agents.js';
import { callRoutes } from './calls.js';
import { campaignRoutes } from './campaigns.js';
import { meRoutes } from './me.js';
import { phoneNumberRoutes } from './phone-numbers.js';
import { usageRoutes } from './usage.js';
import { webhookRoutes } from './webhooks.js';

/** Every route module of the API, one line each. The OpenAPI document lists exactly these. */
export const allRoutes: RouteDefinition[] = [
  ...meRoutes,
  ...agentRoutes,
  ...phoneNumberRoutes,
  ...callRoutes,
  ...campaignRoutes,
  ...usageRoutes,
  ...webhookRoutes,
];
