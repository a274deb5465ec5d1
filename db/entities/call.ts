import { defineEntity, p } from '@mikro-orm/core';
import {
  Agent,
  type AgentTool,
  type AnalysisPlan,
  type KeypadSettings,
  type TransferDestination,
  type VoicemailSettings,
} from './agent.js';
import { Campaign } from './campaign.js';
import { Workspace } from './workspace.js';

export const CALL_STATUSES = [
  'queued',
  'ringing',
  'in_progress',
  'completed',
  'failed',
  'no_answer',
  'busy',
  'canceled',
] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
/** Statuses a call never leaves. */
export const FINAL_CALL_STATUSES: readonly CallStatus[] = [
  'completed',
  'failed',
  'no_answer',
  'busy',
  'canceled',
];
export type CallDirection = 'inbound' | 'outbound';
export type CallChannel = 'phone' | 'web';

export interface CallAnalysisData {
  summary: string;
  outcome: string | null;
  sentiment: 'positive' | 'neutral' | 'negative' | null;
  action_items: string[];
  /** What the agent's analysis plan asked for (post-call spec section 1); null without a plan or a model. */
  data: Record<string, unknown> | null;
  success: boolean | null;
  success_reason: string | null;
  created_at: string | null;
}

/**
 * A call's transfer (telephony spec section 1, "the outcome is true"): where to, how, and how it
 * went. Written when the transfer is tried; `connected` once the carrier has handed the call over.
 */
export interface CallTransfer {
  to: string;
  mode: 'cold' | 'warm';
  status: 'connecting' | 'connected' | 'failed';
  failure: null | 'busy' | 'no_answer' | 'refused' | 'not_allowed';
  started_at: string;
  connected_at: string | null;
}

/** Who calls in a test run's call: the scenario's caller, played by the language model. */
export interface TestCaller {
  testRunId: string;
  prompt: string;
  maxTurns: number;
}

/** The agent's settings as they were when the call started: a later PATCH applies from the next call. */
/** Who answered an outbound phone call (telephony spec section 6). */
export type AnsweredBy = 'human' | 'machine' | 'unknown';

export interface AgentSnapshot {
  name: string;
  language: string | null;
  systemPrompt: string | null;
  firstMessage: string | null;
  outboundFirstMessage: string | null;
  voiceProvider: string | null;
  voiceId: string | null;
  llmProvider: string | null;
  llmModel: string | null;
  /** Absent on calls that started before agents had tools: none. */
  tools?: AgentTool[];
  /** Absent on calls that started before agents had transfer destinations: none. */
  transferDestinations?: TransferDestination[];
  /** Absent on calls that started before agents had analysis plans: none. */
  analysisPlan?: AnalysisPlan | null;
  /** Absent on calls that started before agents had voicemail settings: no detection. */
  voicemail?: VoicemailSettings;
  /** Absent on calls that started before agents had a keypad: no `send_digits`. */
  keypad?: KeypadSettings;
}

const CallSchema = defineEntity({
  name: 'Call',
  tableName: 'calls',
  indexes: [
    { properties: ['workspace', 'startedAt', 'id'] },
    { properties: ['workspace', 'agent', 'startedAt'] },
    { properties: ['workspace', 'status'] },
    // The calls live now, counted by the calls_live metric at every scrape (lib/metrics/database-metrics.ts).
    {
      name: 'calls_live_index',
      expression:
        'create index "calls_live_index" on "calls" ("direction") where "status" in (\'queued\', \'ringing\', \'in_progress\')',
    },
  ],
  properties: {
    id: p.uuid().primary(),
    workspace: () => p.manyToOne(Workspace).mapToPk().deleteRule('cascade'),
    agent: () => p.manyToOne(Agent).mapToPk().nullable().deleteRule('set null'),
    /** The campaign that made the call; null for every other call. */
    campaign: () => p.manyToOne(Campaign).mapToPk().nullable().deleteRule('set null'),
    direction: p.string().length(10).$type<CallDirection>(),
    channel: p.string().length(10).$type<CallChannel>(),
    status: p.string().length(20).$type<CallStatus>(),
    fromNumber: p.string().length(16).nullable(),
    toNumber: p.string().length(16).nullable(),
    /** When the call was placed or came in; `created_after`/`created_before` filter on it. */
    startedAt: p.datetime(),
    answeredAt: p.datetime().nullable(),
    /**
     * Who answered an outbound phone call with voicemail detection (telephony spec section 6):
     * `human`, `machine` or `unknown`; null for other calls and while undecided.
     */
    answeredBy: p.string().length(10).$type<AnsweredBy>().nullable(),
    endedAt: p.datetime().nullable(),
    durationSeconds: p.integer().nullable(),
    endReason: p.string().length(40).nullable(),
    metadata: p.json().$type<Record<string, string>>(),
    analysis: p.json().$type<CallAnalysisData>().nullable(),
    ringTimeoutSeconds: p.integer().nullable(),
    /** The call request's `first_message`; null when omitted, '' when the other side speaks first. */
    firstMessage: p.text().nullable(),
    agentSnapshot: p.json().$type<AgentSnapshot>(),
    transferredTo: p.string().length(16).nullable(),
    /** The transfer tried, and how it went; null: none was. */
    transfer: p.json().$type<CallTransfer>().nullable(),
    /**
     * How long the SIP side bridged the call to its transfer target (`transfer_ended`); GET
     * /usage's `transfer_seconds`. Set on create, not left to the column's default: declared with
     * `.default(0)`, the campaign worker-restart test's calls got stuck every time
     * (test/campaign-workflow.test.ts); why was not pinned down.
     */
    transferSeconds: p.integer().onCreate(() => 0),
    /** The label a web call was started with (`simulate web-call --from-label`). */
    fromLabel: p.string().length(200).nullable(),
    /** A web call from the dashboard's test panel: its far end is the person in the browser, not the simulator. */
    browserFarEnd: p.boolean().default(false),
    /** A test run's call (post-call spec section 2): its far end is a caller the language model plays. */
    testCaller: p.json().$type<TestCaller>().nullable(),
    /**
     * The media gateway that holds the call's audio (its control URL, media/control-api.ts): set when
     * a Media Streams client brings a call in, or when a carrier places a call whose audio streams
     * there. Null: a text-only call (the simulator's far end, a typed test-panel call).
     */
    mediaGateway: p.string().length(200).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export class Call extends CallSchema.class {}
CallSchema.setClass(Call);

export { CallSchema };
