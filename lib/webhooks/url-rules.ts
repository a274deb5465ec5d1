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
    const reason = forbiddenAddressReason(host);
    return reason ? `url points to a ${reason}; only public addresses are allowed` : null;
  }
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost') || !name.includes('.')) {
    return 'url must name a public host';
  }
  for (const address of await resolveQuietly(name)) {
    const reason = forbiddenAddressReason(address);
    if (reason) return `url resolves to a ${reason}; only public addresses are allowed`;
  }
  return null;
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
