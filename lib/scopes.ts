export const SCOPES = [
  'agents:read',
  'agents:write',
  'calls:read',
  'calls:write',
  'numbers:read',
  'numbers:write',
  'webhooks:read',
  'webhooks:write',
  'analytics:read',
] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** A write scope includes the matching read. */
export function grants(held: readonly string[], needed: Scope): boolean {
  if (held.includes(needed)) return true;
  if (needed.endsWith(':read')) return held.includes(needed.replace(/:read$/, ':write'));
  return false;
}
