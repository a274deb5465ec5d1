import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// Custom search attributes on call and campaign workflows, so operators can filter in the Temporal Web UI:
//   WorkspaceId = "<uuid>" AND CallStatus = "in_progress"
// `npm start` and the test harness register them on the dev server; docker-compose registers them
// with the temporal CLI (see README).
export const WorkspaceIdKey = defineSearchAttributeKey('WorkspaceId', SearchAttributeType.KEYWORD);
export const AgentIdKey = defineSearchAttributeKey('AgentId', SearchAttributeType.KEYWORD);
export const CallStatusKey = defineSearchAttributeKey('CallStatus', SearchAttributeType.KEYWORD);
export const CallDirectionKey = defineSearchAttributeKey('CallDirection', SearchAttributeType.KEYWORD);
/** On campaign workflows (with WorkspaceId): `WorkspaceId = "<uuid>" AND CampaignStatus = "paused"`. */
export const CampaignStatusKey = defineSearchAttributeKey('CampaignStatus', SearchAttributeType.KEYWORD);

/** name → type, the form `temporal server start-dev --search-attribute` and the test SDK take. */
export const SEARCH_ATTRIBUTES: Record<string, 'Keyword'> = {
  WorkspaceId: 'Keyword',
  AgentId: 'Keyword',
  CallStatus: 'Keyword',
  CallDirection: 'Keyword',
  CampaignStatus: 'Keyword',
};

/** A call workflow's attributes when it starts (the API's start, or a test run's child). */
export function callSearchAttributes(
  input: { workspaceId: string; agentId: string | null; direction: string },
  status: string,
) {
  return [
    { key: WorkspaceIdKey, value: input.workspaceId },
    { key: AgentIdKey, value: input.agentId ?? '' },
    { key: CallStatusKey, value: status },
    { key: CallDirectionKey, value: input.direction },
  ];
}
