import type { Orm } from '../../db/orm.js';
import { createInvite } from '../../lib/dashboard/invites.js';
import type { ApiResponse } from './api.js';

// A person signed in to the dashboard over real HTTP: the session cookie and CSRF token a browser
// would hold, and a client that sends them (paths starting with / are relative to the API's root,
// so /v1/... and /dashboard/... both work).

export const TEST_PASSWORD = 'correct horse battery';

export class DashboardClient {
  cookie: string | undefined;
  csrfToken: string | undefined;

  constructor(readonly baseUrl: string) {}

  async request<T = any>(
    method: string,
    path: string,
    options: { body?: unknown; csrf?: boolean | string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookie) headers.cookie = this.cookie;
    const csrf = options.csrf ?? true;
    if (csrf && this.csrfToken && method !== 'GET')
      headers['x-csrf-token'] = csrf === true ? this.csrfToken : csrf;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
    const setCookie = response.headers.getSetCookie().find((c) => c.startsWith('va_session='));
    if (setCookie) {
      const value = setCookie.split(';')[0]!;
      this.cookie = value === 'va_session=' ? undefined : value;
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  get<T = any>(path: string) {
    return this.request<T>('GET', path);
  }
  post<T = any>(path: string, body?: unknown, options: { csrf?: boolean | string } = {}) {
    return this.request<T>('POST', path, { body, ...options });
  }

  /** Reads the session (and its CSRF token), as the front end does on load. */
  async refresh() {
    const res = await this.get('/dashboard/auth/session');
    if (res.status === 200) this.csrfToken = res.body.csrf_token;
    return res;
  }
}

/** An invite token for the user, as `admin user invite` makes it. */
export async function inviteToken(orm: Orm, userId: string): Promise<string> {
  return (await createInvite(orm.em.fork(), { userId })).token;
}

/** Invites the user, sets the password through the invite and returns the signed-in client. */
export async function signedInClient(baseUrl: string, orm: Orm, userId: string): Promise<DashboardClient> {
  const client = new DashboardClient(baseUrl);
  const res = await client.post('/dashboard/auth/invite', {
    token: await inviteToken(orm, userId),
    password: TEST_PASSWORD,
  });
  if (res.status !== 200) throw new Error(`invite failed: ${res.status} ${res.text}`);
  await client.refresh();
  return client;
}
