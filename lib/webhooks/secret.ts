import { randomBytes } from 'node:crypto';

/** `whsec_` and 64 hex characters (32 bytes from the CSPRNG), as the spec fixes the form. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('hex')}`;
}
