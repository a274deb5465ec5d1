import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { CampaignPausedReason, CampaignStatus } from '../../db/entities/index.js';

// Signals and the query of the campaign workflow (`campaign-<id>`). The campaign's state is in
// PostgreSQL: the API changes it under a row lock (pause, resume, cancel, added recipients) and
// then signals, so the workflow takes its next step at once instead of at its next timer. A call
// of the campaign signals `callEnded` when it is final (workflows/call-workflow.ts).

export const pauseSignal = defineSignal('pause');
export const resumeSignal = defineSignal('resume');
export const cancelSignal = defineSignal('cancel');
export const recipientsAddedSignal = defineSignal<[{ count: number }]>('recipientsAdded');
export const callEndedSignal = defineSignal<[{ callId: string }]>('callEnded');

export interface CampaignCounts {
  total: number;
  pending: number;
  in_progress: number;
  completed: number;
  failed: number;
  canceled: number;
}

/** What one step of the campaign found and did (the `advanceCampaign` activity). */
export interface CampaignStep {
  status: CampaignStatus;
  pausedReason: CampaignPausedReason | null;
  counts: CampaignCounts;
  /** Calls started by this step. */
  started: number;
  /** When the next step is due without a signal (a window, a retry delay, a call limit), ISO; null: only a signal moves it. */
  wakeAt: string | null;
  /** Why it waits, for operators: `window`, `retry_delay`, `call_rate_limited`, `concurrency`, … */
  waitingFor: string | null;
  /** The workflow has nothing more to do (completed, or canceled with no call live). */
  finished: boolean;
}

/** `temporal workflow query --type campaignProgress`: the last step's view, and the run. */
export interface CampaignProgress {
  step: CampaignStep | null;
  run: number;
  stepsThisRun: number;
}

export const campaignProgressQuery = defineQuery<CampaignProgress>('campaignProgress');
