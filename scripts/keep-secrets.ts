import { chmodSync, chownSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { mediaControlToken, sipControlToken } from './media-streams-token.js';

// `node --import tsx scripts/keep-secrets.ts DIR [--owner UID:GID]`: the control tokens for a
// deployment that does not pass them (docker-compose.yml, service `secrets`). Each one not given in
// the environment is generated once and kept in DIR, where the services read it through
// MEDIA_CONTROL_TOKEN_FILE and SIP_CONTROL_TOKEN_FILE; one given is left to the environment. The
// files are readable by their owner and its group only (the app's user, and the SIP side run in that
// group), as `npm start` keeps the same tokens in the data folder.

export interface KeptSecret {
  name: 'MEDIA_CONTROL_TOKEN' | 'SIP_CONTROL_TOKEN';
  /** The file the services read, or null when the environment gives the secret. */
  file: string | null;
}

export function keepSecrets(
  dir: string,
  env: NodeJS.ProcessEnv,
  owner?: { uid: number; gid: number },
): KeptSecret[] {
  const secrets = [
    { name: 'MEDIA_CONTROL_TOKEN', file: 'media-control-token', keep: mediaControlToken },
    { name: 'SIP_CONTROL_TOKEN', file: 'sip-control-token', keep: sipControlToken },
  ] as const;
  return secrets.map(({ name, file, keep }) => {
    if (env[name]) return { name, file: null };
    keep(dir, undefined);
    const kept = path.join(dir, file);
    if (owner) chownSync(kept, owner.uid, owner.gid);
    chmodSync(kept, 0o440);
    return { name, file: kept };
  });
}

function parseOwner(text: string | undefined): { uid: number; gid: number } | undefined {
  if (text === undefined) return undefined;
  const match = /^(\d+):(\d+)$/.exec(text);
  if (!match) throw new Error(`--owner must be UID:GID, got "${text}"`);
  return { uid: Number(match[1]), gid: Number(match[2]) };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const [dir, flag, ownerText] = process.argv.slice(2);
  if (!dir || (flag !== undefined && flag !== '--owner')) {
    console.error('usage: keep-secrets.ts DIR [--owner UID:GID]');
    process.exit(2);
  }
  for (const { name, file } of keepSecrets(dir, process.env, parseOwner(ownerText))) {
    console.log(file ? `${name}: kept in ${file}` : `${name}: given in the environment`);
  }
}
