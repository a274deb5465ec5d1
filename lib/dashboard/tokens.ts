import { createHash, randomBytes } from 'node:crypto';

/** 32 random bytes, base64url: invite links, session cookies and CSRF tokens. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Tokens are stored only as their SHA-256: a database reader cannot sign in with them. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
