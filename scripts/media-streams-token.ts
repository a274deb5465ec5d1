import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

// MEDIA_STREAMS_TOKEN when it is not set: generated at the first start and kept in the data folder
// (../spec/voice-media-v1.md section 2), so Media Streams clients configured once keep working
// across restarts. `npm start` and `npm run start:cluster` pass it on to the gateway and the workers.

export function mediaStreamsToken(dataDir: string, fromEnv: string | undefined): string {
  if (fromEnv) return fromEnv;
  const file = path.join(dataDir, 'media-streams-token');
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
