import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

// MEDIA_STREAMS_TOKEN when it is not set: generated at the first start and kept in the data folder
// (../spec/voice-media-v1.md section 2), so Media Streams clients configured once keep working
// across restarts. `npm start` and `npm run start:cluster` pass it on to the gateway and the workers.

export function mediaStreamsToken(dataDir: string, fromEnv: string | undefined): string {
  return keptSecret(dataDir, 'media-streams-token', fromEnv);
}

/**
 * MEDIA_CONTROL_TOKEN when it is not set, kept the same way: the secret of the media gateway's
 * control API and the carrier callbacks, and the key of each call's own stream token. Its own, so
 * the Media Streams token a client holds opens its stream and nothing else.
 */
export function mediaControlToken(dataDir: string, fromEnv: string | undefined): string {
  return keptSecret(dataDir, 'media-control-token', fromEnv);
}

/**
 * SIP_CONTROL_TOKEN when it is not set, kept the same way: the secret of the SIP side's control API
 * (dial, release), which the calls workers present. Its own, so the Media Streams token a client
 * holds cannot make the service dial.
 */
export function sipControlToken(dataDir: string, fromEnv: string | undefined): string {
  return keptSecret(dataDir, 'sip-control-token', fromEnv);
}

/** `fromEnv`, else the secret kept in `dataDir/name`, else a new one written there (owner only). */
function keptSecret(dataDir: string, name: string, fromEnv: string | undefined): string {
  if (fromEnv) return fromEnv;
  const file = path.join(dataDir, name);
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept) return kept;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const token = randomBytes(24).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}
