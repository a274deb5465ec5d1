import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { forbiddenAddressReason } from './address-guard.js';

// The rules a webhook URL must meet when it is registered. Delivery checks the connected
// address again (sender.ts); these checks give the owner an early, clear refusal.

export const WEBHOOK_URL_MAX_LENGTH = 2048;
const RESOLVE_TIMEOUT_MS = 2_000;

export interface UrlPolicy {
  /** WEBHOOKS_ALLOW_PRIVATE_TARGETS: http:// and any address are allowed. */
  allowPrivate: boolean;
}

/**
 * Said of every URL whose host is not a public address (a private literal, a local name, a name
 * that resolves to a private address): the same words for each, so a tenant cannot use the
 * refusal to map internal DNS.
 */
export const URL_NOT_ALLOWED = 'url is not allowed: webhooks go to public https addresses only';

/** Why the URL may not be registered, or null when it may. */
export async function webhookUrlProblem(raw: string, policy: UrlPolicy): Promise<string | null> {
  if (raw.length > WEBHOOK_URL_MAX_LENGTH) return `url must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url is not an absolute URL';
  }
  const schemes = policy.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol))
    return policy.allowPrivate ? 'url must be http or https' : 'url must use https';
  if (url.username || url.password) return 'url must not contain credentials';
  if (!url.hostname) return 'url must name a host';
  if (policy.allowPrivate) return null;

  // URL already normalised numeric forms such as http://2130706433/ to 127.0.0.1.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    return forbiddenAddressReason(host) ? URL_NOT_ALLOWED : null;
  }
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost') || !name.includes('.')) {
    return URL_NOT_ALLOWED;
  }
  const addresses = await resolveQuietly(name);
  return addresses.some((address) => forbiddenAddressReason(address)) ? URL_NOT_ALLOWED : null;
}

/**
 * A name that does not resolve (yet) is accepted: DNS may be set up after the endpoint is, and
 * every delivery checks the address it connects to anyway.
 */
async function resolveQuietly(name: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), RESOLVE_TIMEOUT_MS);
  });
  const resolved = lookup(name, { all: true, verbatim: true }).then(
    (answers) => answers.map((a) => a.address),
    () => [],
  );
  try {
    return await Promise.race([resolved, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
