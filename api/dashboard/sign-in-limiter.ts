import { createHash } from 'node:crypto';
import type { Orm } from '../../db/orm.js';

// Sign-in attempts per account and per client address, and invite uses per client address,
// counted in PostgreSQL (sign_in_attempt_windows) so every API process shares the counts. Every
// attempt counts, right or wrong, so guessing is bounded whichever way it is spread. Windows of
// WINDOW_SECONDS; a refusal says when the window ends (the 429's Retry-After).

export const WINDOW_SECONDS = 15 * 60;
export const ATTEMPTS_PER_ACCOUNT = 10;
export const ATTEMPTS_PER_ADDRESS = 30;

export type SignInDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class SignInLimiter {
  constructor(
    private readonly orm: Orm,
    private readonly now: () => number = Date.now,
  ) {}

  /** A sign-in: limited per account and per address. */
  take(input: { email: string; address: string }): Promise<SignInDecision> {
    return this.decide([
      [`account:${digest(input.email.toLowerCase())}`, ATTEMPTS_PER_ACCOUNT],
      [`address:${digest(input.address)}`, ATTEMPTS_PER_ADDRESS],
    ]);
  }

  /**
   * An invite use (a token guess costs a look-up, a right one an argon2 hash): limited per address
   * like sign-in, in a bucket of its own so the two do not use up each other's attempts.
   */
  takeInvite(input: { address: string }): Promise<SignInDecision> {
    return this.decide([[`invite-address:${digest(input.address)}`, ATTEMPTS_PER_ADDRESS]]);
  }

  private async decide(buckets: [bucket: string, limit: number][]): Promise<SignInDecision> {
    const nowSeconds = Math.floor(this.now() / 1000);
    const windowStart = nowSeconds - (nowSeconds % WINDOW_SECONDS);
    const counts = await Promise.all(buckets.map(([bucket]) => this.count(bucket, windowStart)));
    if (counts.some((count, i) => count > buckets[i]![1])) {
      return { allowed: false, retryAfterSeconds: windowStart + WINDOW_SECONDS - nowSeconds };
    }
    return { allowed: true };
  }

  private async count(bucket: string, windowStart: number): Promise<number> {
    const connection = this.orm.em.getConnection();
    const rows = await connection.execute<{ count: number }[]>(
      `insert into sign_in_attempt_windows (bucket, window_start, count) values (?, ?, 1)
       on conflict (bucket, window_start) do update set count = sign_in_attempt_windows.count + 1
       returning count`,
      [bucket, windowStart],
      'all',
    );
    // Old windows go now and then; one statement, nothing waits for it.
    if (Math.random() < 0.01) {
      void connection
        .execute(
          'delete from sign_in_attempt_windows where window_start < ?',
          [windowStart - WINDOW_SECONDS],
          'run',
        )
        .catch(() => {});
    }
    return rows[0]?.count ?? 0;
  }
}

/** Buckets name a digest, not the address or email itself. */
function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 32);
}
