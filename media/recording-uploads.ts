import { rm } from 'node:fs/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { FINAL_CALL_STATUSES } from '../db/entities/index.js';
import type { Logger } from '../lib/logger.js';
import { recordingFailures } from '../lib/metrics/service-metrics.js';
import { recordedCallIds, recordingPath } from '../lib/recordings/recording-files.js';
import type { RecordingStore } from '../lib/recordings/recording-store.js';
import { keepsNoRecording } from '../lib/recordings/retention.js';

// RECORDINGS_STORE=s3 at the media gateway (telephony spec section 4): a call's recording is written
// to RECORDINGS_DIR while the call runs; once its audio is over the file goes to the store
// (`keep`), and the local copy goes once the store confirmed it. A store that is down does not hold
// the call up: after a few quick tries the file stays and a sweep (every SWEEP_EVERY_MS, and at the
// gateway's start, which finds what a killed gateway left) tries again with a backoff per call.
// The sweep takes only files of calls that are final in the database and not live here, so
// gateways sharing one folder never upload a recording another is still writing. A call that is
// final in a workspace keeping no recording (retention 0) has its file removed instead, and one
// that became so while its upload ran has the object deleted again.

/** Quick tries right after the call: a brief hiccup of the store is ridden out before the call is final. */
const QUICK_TRIES = 3;
const QUICK_PAUSE_MS = 500;
const SWEEP_EVERY_MS = 30_000;
const FIRST_BACKOFF_MS = 5_000;
const LONGEST_BACKOFF_MS = 5 * 60_000;

export interface RecordingUploadsDeps {
  store: RecordingStore;
  /** RECORDINGS_DIR: where the gateway writes recordings. */
  dir: string;
  em: () => EntityManager;
  /** Whether this gateway holds the call's audio now (its file is still being written). */
  live: (callId: string) => boolean;
  logger: Logger;
  /** Time source, for the backoff. */
  now?: () => number;
}

export class RecordingUploads {
  private readonly inFlight = new Map<string, Promise<boolean>>();
  /** Calls whose upload failed: when to try again, and the wait after that. */
  private readonly backoff = new Map<string, { at: number; waitMs: number }>();
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly deps: RecordingUploadsDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Whether recordings leave this gateway at all (RECORDINGS_STORE=s3). */
  get uploading(): boolean {
    return this.deps.store.kind !== 'file';
  }

  /**
   * The call's audio is over and its file closed: it goes to the store now. True once the store
   * holds it; false when it did not take it after the quick tries (the sweep goes on trying).
   * Never rejects.
   */
  async keep(callId: string): Promise<boolean> {
    if (!this.uploading) return true;
    for (let attempt = 1; ; attempt++) {
      if (await this.upload(callId, attempt === QUICK_TRIES)) return true;
      if (attempt === QUICK_TRIES) return false;
      await new Promise((resolve) => setTimeout(resolve, QUICK_PAUSE_MS * attempt));
    }
  }

  /** Starts the sweep: now (what an earlier run left) and every SWEEP_EVERY_MS. */
  start(): void {
    if (!this.uploading || this.timer) return;
    const tick = () => {
      void this.sweep().finally(() => {
        if (this.timer) this.timer = setTimeout(tick, SWEEP_EVERY_MS).unref();
      });
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * One pass over RECORDINGS_DIR: every recording of a call that is final and not live here, and
   * whose backoff has passed, is uploaded. Returns how many went to the store.
   */
  async sweep(): Promise<number> {
    if (!this.uploading) return 0;
    let ids: string[];
    try {
      ids = (await recordedCallIds(this.deps.dir)).filter(
        (id) =>
          !this.deps.live(id) && !this.inFlight.has(id) && (this.backoff.get(id)?.at ?? 0) <= this.now(),
      );
      if (ids.length === 0) return 0;
      const rows: { id: string }[] = await this.deps
        .em()
        .getConnection()
        .execute('select id from calls where id in (?) and status in (?)', [ids, FINAL_CALL_STATUSES]);
      ids = rows.map((row) => row.id);
    } catch (error) {
      this.deps.logger.warn('recordings left to upload could not be listed', { error: `${error}` });
      return 0;
    }
    let kept = 0;
    for (const id of ids) if (await this.upload(id, true)) kept++;
    return kept;
  }

  /** One try; a failure is logged (and counted) once per call when `report`, and backs the call off. */
  private upload(callId: string, report: boolean): Promise<boolean> {
    const running = this.inFlight.get(callId);
    if (running) return running;
    const attempt = this.keepUnlessDropped(callId)
      .then(
        () => {
          this.backoff.delete(callId);
          return true;
        },
        (error: unknown) => {
          const earlier = this.backoff.get(callId);
          if (report) {
            const waitMs = earlier ? Math.min(earlier.waitMs * 2, LONGEST_BACKOFF_MS) : FIRST_BACKOFF_MS;
            this.backoff.set(callId, { at: this.now() + waitMs, waitMs });
            if (!earlier) {
              recordingFailures.inc({ stage: 'upload' });
              this.deps.logger.error('recording not uploaded yet: the local file stays and is tried again', {
                callId,
                error: `${error}`,
              });
            }
          }
          return false;
        },
      )
      .finally(() => this.inFlight.delete(callId));
    this.inFlight.set(callId, attempt);
    return attempt;
  }

  private async keepUnlessDropped(callId: string): Promise<void> {
    if (await this.dropped(callId)) return;
    await this.deps.store.keep(callId, recordingPath(this.deps.dir, callId));
    // The call's last step may have looked for it (to delete it) before it landed.
    if (await this.dropped(callId)) await this.deps.store.delete(callId);
  }

  /** Retention 0 and the call final: the local file goes, and nothing is to be kept. */
  private async dropped(callId: string): Promise<boolean> {
    if (!(await keepsNoRecording(this.deps.em(), callId))) return false;
    await rm(recordingPath(this.deps.dir, callId), { force: true });
    this.deps.logger.info('recording not kept: its workspace keeps none once the call is final', { callId });
    return true;
  }
}
