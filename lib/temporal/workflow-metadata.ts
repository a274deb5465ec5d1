import type { CallWorkflowInput, SimulatedCalleeInput } from './workflow-contracts.js';

// What each workflow says about itself in the Temporal Web UI: a one-line static summary (shown in
// the workflow lists, next to the id) and static details (markdown, on the workflow's page), set
// when it starts (Temporal user metadata: `staticSummary` / `staticDetails`). Operators then see
// who is called by which agent, and which event goes to which endpoint, without opening histories.
// Pure (no I/O, no clock): workflow code uses it for the children it starts.

export interface WorkflowMetadata {
  staticSummary: string;
  staticDetails: string;
}

function callLine(input: CallWorkflowInput): string {
  const agent = input.agentId ? `agent ${input.agentId}` : 'no agent';
  if (input.channel === 'web') return `web call to ${agent}`;
  if (input.direction === 'inbound') {
    return `inbound call from ${input.from ?? 'unknown'} to ${input.to ?? 'unknown'}, answered by ${agent}`;
  }
  return `outbound call to ${input.to ?? 'unknown'} from ${input.from ?? 'unknown'} by ${agent}`;
}

/** The call workflow (`call-<callId>`). */
export function callWorkflowMetadata(input: CallWorkflowInput): WorkflowMetadata {
  return {
    staticSummary: callLine(input),
    staticDetails: [
      `**Call** \`${input.callId}\`: ${callLine(input)}`,
      '',
      `- direction: ${input.direction}, channel: ${input.channel}`,
      `- from: ${input.from ?? '-'}`,
      `- to: ${input.to ?? '-'}`,
      `- agent: ${input.agentId ? `\`${input.agentId}\`` : '-'}`,
      `- workspace: \`${input.workspaceId}\``,
      `- ring timeout: ${input.ringTimeoutSeconds} s`,
      '',
      'The current step is in the current details and in the `callProgress` query; its events are the `event-fanout-<eventId>` children.',
    ].join('\n'),
  };
}

/** The simulated far end of a call (`carrier-sim-<callId>`). */
export function farEndMetadata(callId: string, input: SimulatedCalleeInput): WorkflowMetadata {
  const scenario = input.scenarioNumber.slice(-4) || 'default';
  return {
    staticSummary: `simulated far end of call ${callId} (${input.scenarioNumber || 'web'}, scenario ${scenario})`,
    staticDetails: [
      `**Simulated far end** of call \`${callId}\` (workflow \`${input.callWorkflowId}\`)`,
      '',
      `- number: ${input.scenarioNumber || '-'}; its last four digits pick the scenario (operations contract, section 4)`,
      `- ${input.connected ? 'connected from the start (the call came in)' : 'dialled: rings first'}`,
      `- time scale: ${input.timeScale}`,
    ].join('\n'),
  };
}

/** The far end of a test-panel call: the person in the browser. */
export function browserCallerMetadata(callId: string, input: { callWorkflowId: string }): WorkflowMetadata {
  return {
    staticSummary: `browser far end of test-panel call ${callId}`,
    staticDetails: `**Browser far end** of call \`${callId}\` (workflow \`${input.callWorkflowId}\`): the dashboard test panel's person types the caller's lines.`,
  };
}

/** The far end of a test run's call: the caller the language model plays. */
export function testCallerMetadata(
  callId: string,
  input: { callWorkflowId: string; maxTurns: number },
): WorkflowMetadata {
  return {
    staticSummary: `test caller of call ${callId} (played by the language model)`,
    staticDetails: `**Test caller** of call \`${callId}\` (workflow \`${input.callWorkflowId}\`): the language model plays the scenario's caller, at most ${input.maxTurns} lines.`,
  };
}

/** A test run (`test-run-<id>`): simulated callers against one agent. */
export function testRunMetadata(input: { testRunId: string; workspaceId: string }): WorkflowMetadata {
  return {
    staticSummary: `test run ${input.testRunId}`,
    staticDetails: [
      `**Test run** \`${input.testRunId}\` of workspace \`${input.workspaceId}\``,
      '',
      'Its calls are its children (`call-<id>`); the results so far are in the `testRunProgress` query and in PostgreSQL (GET /test-runs/{id}).',
    ].join('\n'),
  };
}

/** An event's fan-out to the subscribed webhook endpoints (`event-fanout-<eventId>`). */
export function eventFanOutMetadata(event: {
  eventId: string;
  type: string;
  callId: string;
}): WorkflowMetadata {
  return {
    staticSummary: `${event.type} of call ${event.callId} to the subscribed webhook endpoints`,
    staticDetails: [
      `**Event** \`${event.eventId}\` (${event.type}) of call \`${event.callId}\``,
      '',
      'Records one delivery per subscribed active endpoint and starts a `webhook-delivery-<deliveryId>` child for each.',
    ].join('\n'),
  };
}

/** One event to one endpoint (`webhook-delivery-<deliveryId>`). */
export function webhookDeliveryMetadata(delivery: {
  deliveryId: string;
  eventId: string;
  eventType: string | undefined;
  /** Known when the starter has it (a test event); otherwise the current details name it. */
  endpointUrl?: string;
}): WorkflowMetadata {
  const what = delivery.eventType ?? 'event';
  const to = delivery.endpointUrl ? ` to ${delivery.endpointUrl}` : '';
  return {
    staticSummary: `${what} ${delivery.eventId}${to || ' to a webhook endpoint'}`,
    staticDetails: [
      `**Webhook delivery** \`${delivery.deliveryId}\`: ${what} \`${delivery.eventId}\`${to}`,
      '',
      'Up to 5 attempts (retries after 30 s, 2 min, 10 min, 1 h); the current details show the last attempt.',
    ].join('\n'),
  };
}
