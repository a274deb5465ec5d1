import { isDatabaseUnavailable } from '../../db/database-errors.js';
import type { UserRole } from '../../db/entities/index.js';
import type { Orm } from '../../db/orm.js';
import { API_KEY_PREFIX, hashApiKeySecret } from '../../lib/api-key-secret.js';
import { apiKeyInvalid, apiKeyMissing, authUnavailable } from '../http/errors.js';
import type { AuthInfo } from '../http/route.js';

// Resolves `Authorization: Bearer <key>` to the key, its creator's current role and the
// workspace's request limit. Found keys are cached for CACHE_TTL_MS (30 s) so the hot path needs
// no query; revocation, a role change or a new request limit therefore applies within 30 s, inside
// the spec's 60-second revocation bound. Expiry is checked on every request against the cached
// expires_at, so it is exact. Refusals are cached too, so a flood of wrong keys costs one query
// per distinct key: that is safe because a refused key never becomes valid (a new key's secret is
// random and unknown before it is created; revocation and expiry are final).

export const CACHE_TTL_MS = 30_000;
const MAX_CACHED_KEYS = 10_000;

export interface AuthenticatedKey extends AuthInfo {
  expiresAt: number | null;
  requestsPerSecond: number;
}

interface CacheEntry {
  key: AuthenticatedKey | null;
  fetchedAt: number;
}

interface KeyRow {
  id: string;
  workspace_id: string;
  created_by_id: string;
  scopes: string[];
  expires_at: string | Date | null;
  revoked_at: string | Date | null;
  role: UserRole;
  requests_per_second: number;
}

const LOOKUP_SQL = `
  select k.id, k.workspace_id, k.created_by_id, k.scopes, k.expires_at, k.revoked_at, u.role,
         w.requests_per_second
    from api_keys k
    join users u on u.id = k.created_by_id and u.workspace_id = k.workspace_id
    join workspaces w on w.id = k.workspace_id
   where k.secret_hash = ?`;

export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly orm: Orm,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key behind an Authorization header value, or the spec's 401/503 ApiError. */
  async authenticate(authorization: string | undefined): Promise<AuthenticatedKey> {
    const secret = bearerToken(authorization);
    if (!secret) throw apiKeyMissing();
    if (!secret.startsWith(API_KEY_PREFIX) || secret.length > 200) throw apiKeyInvalid();
    const hash = hashApiKeySecret(secret);
    const now = this.now();
    let entry = this.cache.get(hash);
    if (!entry || now - entry.fetchedAt >= CACHE_TTL_MS) {
      entry = { key: await this.lookup(hash), fetchedAt: now };
      this.remember(hash, entry);
    }
    const key = entry.key;
    if (!key || (key.expiresAt !== null && key.expiresAt <= now)) throw apiKeyInvalid();
    return key;
  }

  private async lookup(hash: string): Promise<AuthenticatedKey | null> {
    let row: KeyRow | undefined;
    try {
      const rows = await this.orm.em.getConnection().execute<KeyRow[]>(LOOKUP_SQL, [hash], 'all');
      row = rows[0];
    } catch (error) {
      // Only a database that cannot be reached is a retryable 503; anything else is a bug (500).
      if (isDatabaseUnavailable(error)) throw authUnavailable();
      throw error;
    }
    if (!row || row.revoked_at !== null) return null;
    return {
      keyId: row.id,
      workspaceId: row.workspace_id,
      userId: row.created_by_id,
      role: row.role,
      scopes: row.scopes,
      expiresAt: row.expires_at === null ? null : new Date(row.expires_at).getTime(),
      requestsPerSecond: row.requests_per_second,
    };
  }

  private remember(hash: string, entry: CacheEntry) {
    if (this.cache.size >= MAX_CACHED_KEYS) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.delete(hash);
    this.cache.set(hash, entry);
  }
}

/**
 * The credentials of `Authorization: Bearer <token>` (scheme in any letter case, any run of
 * spaces); undefined when there is no Bearer header or it carries nothing (api_key_missing).
 * Whatever follows the scheme is the key as sent, so `Bearer a b` is checked, and refused, as a
 * key (api_key_invalid), not taken for a missing one.
 */
function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer(?:[ \t]+(.*))?$/i.exec(header);
  return match?.[1]?.trim() || undefined;
}
