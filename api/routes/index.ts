import type { RouteDefinition } from '../http/route.js';
import { agentToolsSecretRoutes } from './agent-tools-secret.js';
import { agentRoutes } from './agents.js';
import { callRecordingRoutes } from './call-recordings.js';
import { callToolCallRoutes } from './call-tool-calls.js';
import { callRoutes } from './calls.js';
import { campaignRecipientRoutes } from './campaign-recipients.js';
import { campaignMoveRoutes, campaignRoutes } from './campaigns.js';
import { meRoutes } from './me.js';
import { phoneNumberRoutes } from './phone-numbers.js';
import { testRunRoutes } from './test-runs.js';
import { usageRoutes } from './usage.js';
import { webhookDeliveryRoutes } from './webhook-deliveries.js';
import { webhookEndpointRoutes } from './webhook-endpoints.js';
import { webhookRecoveryRoutes } from './webhook-recoveries.js';

/** Every route module of the API, one line each. The OpenAPI document lists exactly these. */
export const allRoutes: RouteDefinition[] = [
  ...meRoutes,
  ...agentRoutes,
  ...agentToolsSecretRoutes,
  ...phoneNumberRoutes,
  ...callRoutes,
  ...callRecordingRoutes,
  ...callToolCallRoutes,
  ...campaignRoutes,
  ...campaignRecipientRoutes,
  ...campaignMoveRoutes,
  ...testRunRoutes,
  ...usageRoutes,
  ...webhookEndpointRoutes,
  ...webhookDeliveryRoutes,
  ...webhookRecoveryRoutes,
];
