import { defineEntity, p } from '@mikro-orm/core';
import { Workspace } from './workspace.js';

export const AGENT_STATUSES = ['draft', 'published', 'unpublished', 'archived'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

/**
 * One of the integrator's HTTP functions the agent's language model may call during a call
 * (agent-tools spec section 1). Stored as written; the API shows it with `type: "function"`.
 */
export interface AgentTool {
  name: string;
  description: string;
  /** A JSON Schema (draft 2020-12) of `"type": "object"`: the arguments the model must give. */
  parameters: Record<string, unknown>;
  url: string;
  /** One attempt's limit, 1–30 s. */
  timeoutSeconds: number;
  /** Said as soon as the tool is called, unless the model's own words came with the call. */
  speakWhileWaiting: string | null;
}

/**
 * A number the agent may transfer a call to (telephony spec section 1): the model is offered these
 * and nothing else. Checked like every number the service dials when written and again when used.
 */
export interface TransferDestination {
  /** E.164. */
  number: string;
  /** What the model is told the number is for ("the front desk", "billing"). */
  description: string;
  /** `cold`: the caller is handed over at once; `warm`: the target is briefed first. */
  mode: 'cold' | 'warm';
  /** For a warm transfer, what the target is told first; null: a summary of the call. */
  message: string | null;
}

/**
 * What the integrator wants from each of the agent's calls (post-call spec section 1): the data,
 * by a JSON Schema of `"type": "object"` (the rules of a tool's `parameters`), and a verdict
 * against their own criteria. Either may be null.
 */
export interface AnalysisPlan {
  dataSchema: Record<string, unknown> | null;
  successCriteria: string | null;
}

/**
 * What the agent does when an outbound phone call is answered by a machine (telephony spec
 * section 6). Null on the agent: the defaults (`DEFAULT_VOICEMAIL`).
 */
export interface VoicemailSettings {
  /** Whether the first seconds after answer decide who answered (`Call.answeredBy`). */
  detect: boolean;
  /** `hang_up` at once, or `leave_message` after the beep. */
  action: 'hang_up' | 'leave_message';
  /** What the agent says to the machine (`{{variables}}` filled); required for `leave_message`. */
  message: string | null;
}

export const DEFAULT_VOICEMAIL: VoicemailSettings = { detect: true, action: 'hang_up', message: null };

/** Whether the model may press keys on the call (telephony spec section 7). Null on the agent: `{ send: false }`. */
export interface KeypadSettings {
  send: boolean;
}

export const DEFAULT_KEYPAD: KeypadSettings = { send: false };

/**
 * A voice agent. DELETE sets `deletedAt` (a tombstone) rather than removing the row, so past
 * calls keep their `agent_id`; every read filters deleted agents out.
 */
const AgentSchema = defineEntity({
  name: 'Agent',
  tableName: 'agents',
  indexes: [{ properties: ['workspace', 'createdAt', 'id'] }],
  properties: {
    id: p.uuid().primary(),
    workspace: () => p.manyToOne(Workspace).mapToPk().deleteRule('cascade'),
    name: p.string().length(200),
    description: p.text().nullable(),
    status: p.string().length(20).$type<AgentStatus>(),
    language: p.string().length(20).nullable(),
    systemPrompt: p.text().nullable(),
    firstMessage: p.text().nullable(),
    outboundFirstMessage: p.text().nullable(),
    voiceProvider: p.string().length(100).nullable(),
    voiceId: p.string().length(200).nullable(),
    llmProvider: p.string().length(100).nullable(),
    llmModel: p.string().length(200).nullable(),
    tools: p
      .json()
      .$type<AgentTool[]>()
      .onCreate(() => []),
    transferDestinations: p
      .json()
      .$type<TransferDestination[]>()
      .onCreate(() => []),
    analysisPlan: p.json().$type<AnalysisPlan>().nullable(),
    /** Null: the defaults (`DEFAULT_VOICEMAIL`); agents made before the field have it null. */
    voicemail: p.json().$type<VoicemailSettings>().nullable(),
    /** Null: the default (`DEFAULT_KEYPAD`). */
    keypad: p.json().$type<KeypadSettings>().nullable(),
    /**
     * Signs the agent's tool requests (`tsec_…`); null until `POST /agents/{id}/tools-secret` makes
     * one. Read at each request, never copied into a call or a workflow's history.
     */
    toolsSecret: p.string().length(70).nullable().hidden(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    deletedAt: p.datetime().nullable(),
  },
});

export class Agent extends AgentSchema.class {}
AgentSchema.setClass(Agent);

export { AgentSchema };
