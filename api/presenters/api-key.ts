import type { ApiKey } from '../../db/entities/index.js';

/** The dashboard's ApiKey object: never the secret; `created_by` as the maker's email. */
export function presentKey(key: ApiKey, emails: Map<string, string>) {
  return {
    object: 'api_key',
    id: key.id,
    name: key.name,
    scopes: key.scopes,
    created_by: emails.get(key.createdBy) ?? null,
    created_at: key.createdAt.toISOString(),
    expires_at: key.expiresAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}
