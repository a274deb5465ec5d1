import { connect } from 'node:net';
import type { CheckResult } from './readiness.js';

// Whether a service answers at all: a TCP connection to each URL's host and port. The readiness of
// the media gateway's speech (telephony spec section 5): the local speech server, or a provider's
// endpoint, that is not there makes every call fail, so the gateway is not ready while it is gone.

/** 'ok' when every URL's host:port accepts a connection within the readiness check's time. */
export async function reachable(urls: readonly string[]): Promise<CheckResult> {
  const addresses = [...new Set(urls.map((url) => addressOf(new URL(url))))];
  const answers = await Promise.all(addresses.map(accepts));
  return answers.every(Boolean) ? 'ok' : 'unavailable';
}

function addressOf(url: URL): string {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return `${url.hostname.replace(/^\[(.*)\]$/, '$1')}|${port}`;
}

function accepts(address: string): Promise<boolean> {
  const [host, port] = address.split('|') as [string, string];
  return new Promise((resolve) => {
    const socket = connect({ host, port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.setTimeout(1_500, () => done(false));
  });
}
