import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'svc_live_';

/** `svc_live_` + 32 random bytes (base64url, 43 characters). Shown once; only its hash is kept. */
export function generateApiKeySecret(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** SHA-256 is enough here: the secret has 256 bits of entropy, so it cannot be guessed from its hash. */
export function hashApiKeySecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}
