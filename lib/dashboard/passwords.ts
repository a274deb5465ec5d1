import { type Algorithm, hash, verify } from '@node-rs/argon2';

// Dashboard passwords: argon2id with the library's defaults (19 MiB, 2 passes, 1 lane: OWASP's
// minimum recommendation), in PHC string form so the parameters travel with each hash.

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

/** Why a new password is refused, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH)
    return `The password must be at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (password.length > PASSWORD_MAX_LENGTH)
    return `The password must be at most ${PASSWORD_MAX_LENGTH} characters.`;
  return null;
}

/** `Algorithm.Argon2id`, a const enum the compiler cannot import under verbatimModuleSyntax. */
const ARGON2ID = 2 as Algorithm;

export function hashPassword(password: string): Promise<string> {
  return hash(password, { algorithm: ARGON2ID });
}

export async function passwordMatches(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/**
 * A hash of nothing anyone can type, checked when the account is unknown, so a sign-in costs the
 * same time whether or not the address has an account.
 */
let decoyHash: Promise<string> | undefined;
export function decoyPasswordHash(): Promise<string> {
  decoyHash ??= hashPassword(`decoy-${Math.random()}`);
  return decoyHash;
}
