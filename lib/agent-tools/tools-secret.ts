import { randomBytes } from 'node:crypto';

/** `tsec_` and 64 hex characters (32 bytes from the CSPRNG): the key of an agent's tool requests. */
export function generateToolsSecret(): string {
  return `tsec_${randomBytes(32).toString('hex')}`;
}

export const TOOLS_SECRET_PATTERN = '^tsec_[0-9a-f]{64}$';
