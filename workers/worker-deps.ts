import type { Client } from '@temporalio/client';
import type { NativeConnection, WorkflowBundle } from '@temporalio/worker';
import type { Orm } from '../db/orm.js';
import type { CallAnalyzer } from '../lib/analysis/analyzer.js';
import type { PlanAnswerer } from '../lib/analysis/plan-answerer.js';
import type { Carrier } from '../lib/carrier/carrier.js';
import type { Logger } from '../lib/logger.js';
import type { Settings } from '../lib/settings.js';
import type { VoiceRuntime } from '../lib/voice-runtime/voice-runtime.js';

/** Ports other than the defaults (tests hand in fakes here). */
export interface WorkerPorts {
  carrier?: Carrier;
  voiceRuntime?: VoiceRuntime;
  analyzer?: CallAnalyzer;
  /** null: no language model answers analysis plans, whatever the settings say. */
  planAnswerer?: PlanAnswerer | null;
}

/**
 * Everything a worker of this service may be built from. workers/main.ts and the tests build one
 * of these and hand it to every create*Worker; each worker takes only the part it uses
 * (`WorkerNeeds`), so a caller with less (a test without a client, a process without a database)
 * can still build the workers that do not need it.
 */
export interface WorkerDeps {
  /** The connection the worker polls on. */
  connection: NativeConnection;
  /** A client of the same namespace (the simulated carrier starts and signals its far ends with it). */
  client: Client;
  settings: Settings;
  orm: Orm;
  /** A prebuilt bundle of workflows/index.ts (shared by the workers of a process or test); built from source when absent. */
  workflowBundle?: WorkflowBundle;
  /** Workflows kept in memory between tasks; 0 turns sticky execution off (every task replays). */
  maxCachedWorkflows?: number;
  ports?: WorkerPorts;
  /** The service's structured log for what the workers' activities report (each agent turn's latency); default JSON lines on stdout at LOG_LEVEL. */
  logger?: Logger;
}

/** The part of WorkerDeps a worker takes: the deps named in `K`, and of the settings those in `S`. */
export type WorkerNeeds<K extends Exclude<keyof WorkerDeps, 'settings'>, S extends keyof Settings> = Pick<
  WorkerDeps,
  K
> & { settings: Pick<Settings, S> };
