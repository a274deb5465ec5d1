import { Client, Connection } from '@temporalio/client';
import { type ApiApp, createApp } from '../../api/app.js';
import type { AppDeps, RouteDefinition } from '../../api/http/route.js';
import { allRoutes } from '../../api/routes/index.js';
import { listen } from '../../api/server.js';
import type { UserRole } from '../../db/entities/index.js';
import type { Orm } from '../../db/orm.js';
import { createApiKey, createUser, createWorkspace, setUserRole } from '../../lib/accounts.js';
import { createLogger, type Logger } from '../../lib/logger.js';
import { SCOPES } from '../../lib/scopes.js';
import { loadSettings, type Settings } from '../../lib/settings.js';
import { freshDatabase, type TestDatabase } from './database.js';
import { type SharedDevServer, sharedDevServer } from './temporal.js';

// The API on a random port of 127.0.0.1 against a test database, fixtures for workspaces, people
// and keys, and a small fetch-based client.

export interface TestApi {
  /** `http://127.0.0.1:<port>` (no /v1). */
  url: string;
  app: ApiApp;
  deps: AppDeps;
  /** Every log line the app wrote, parsed. */
  logs: Record<string, unknown>[];
  /** A client sending `secret` as the bearer key (none when omitted). */
  client(secret?: string): ApiClient;
  close(): Promise<void>;
}

export async function startApi(options: {
  orm: Orm;
  /** Default: every route module. */
  routes?: RouteDefinition[];
  settings?: Partial<Settings>;
  /** Default: on first use, a client of the shared dev server (test/support/temporal.ts). */
  temporal?: () => Promise<Client>;
  logLevel?: Settings['logLevel'];
  /** The rate limiter's clock in ms (default: the wall clock). */
  rateLimitClock?: () => number;
}): Promise<TestApi> {
  const settings: Settings = { ...loadSettings(), host: '127.0.0.1', port: 0, ...options.settings };
  const logs: Record<string, unknown>[] = [];
  const logger: Logger = createLogger(options.logLevel ?? 'info', {
    write: (line) => logs.push(JSON.parse(line)),
  });
  // Only tests whose routes reach Temporal pay for a dev server.
  let ownTemporal: Promise<{ client: Client; server: SharedDevServer }> | undefined;
  const connectOwnTemporal = async () => {
    ownTemporal ??= (async () => {
      const server = await sharedDevServer();
      const connection = await Connection.connect({ address: server.address });
      return { server, client: new Client({ connection, namespace: server.namespace }) };
    })();
    return (await ownTemporal).client;
  };
  const deps: AppDeps = {
    settings,
    orm: options.orm,
    temporal: options.temporal ?? connectOwnTemporal,
    logger,
  };
  const app = createApp(deps, {
    routes: options.routes ?? allRoutes,
    rateLimitClock: options.rateLimitClock,
  });
  // The client (fetch) and this server share one event loop. A test that keeps the loop busy for
  // longer than the keep-alive timeout (compiling every schema of the document on a loaded
  // machine) let both close the idle connection on the same turn, and the next request on it
  // failed with ECONNRESET. A minute of keep-alive puts that out of reach.
  const server = await listen(app, { host: '127.0.0.1', port: 0, keepAliveTimeoutMs: 60_000 });
  return {
    url: server.url,
    app,
    deps,
    logs,
    client: (secret) => new ApiClient(server.url, secret),
    async close() {
      await server.close();
      const own = await ownTemporal?.catch(() => undefined);
      await own?.client.connection.close();
      await own?.server.close();
    },
  };
}

/**
 * For a test file's before(): a fresh database, the API on it and an owner whose key has a rate
 * limit high enough never to refuse. Close with closeApiAndDatabase().
 */
export async function startApiOnFreshDatabase(): Promise<{ db: TestDatabase; api: TestApi; owner: Fixture }> {
  const db = await freshDatabase();
  const api = await startApi({ orm: db.orm });
  const owner = await createFixture(db.orm, { requestsPerSecond: 10_000 });
  return { db, api, owner };
}

/** For a test file's after(): stops the API, then closes the database (either may be unset). */
export async function closeApiAndDatabase(
  api: TestApi | undefined,
  db: TestDatabase | undefined,
): Promise<void> {
  await api?.close();
  await db?.close();
}

export interface Fixture {
  workspaceId: string;
  userId: string;
  keyId: string;
  secret: string;
}

/**
 * A workspace (or `workspaceId`'s) with a user of `role` and a key made by that user.
 * Keys are made by owners and admins, so a member's or viewer's key is made while the user is an
 * owner and the role is set afterwards, as a demotion would.
 */
export async function createFixture(
  orm: Orm,
  options: {
    workspaceId?: string;
    workspaceName?: string;
    role?: UserRole;
    scopes?: readonly string[];
    expiresAt?: Date | null;
    requestsPerSecond?: number;
  } = {},
): Promise<Fixture> {
  const em = orm.em.fork();
  const workspaceId =
    options.workspaceId ??
    (await createWorkspace(em, { name: options.workspaceName ?? 'Test workspace' })).id;
  if (options.requestsPerSecond !== undefined) {
    await em
      .getConnection()
      .execute('update workspaces set requests_per_second = ? where id = ?', [
        options.requestsPerSecond,
        workspaceId,
      ]);
  }
  const role = options.role ?? 'owner';
  const user = await createUser(em, {
    workspaceId,
    email: `user-${crypto.randomUUID()}@example.test`,
    role: role === 'admin' ? 'admin' : 'owner',
  });
  const { key, secret } = await createApiKey(em, {
    workspaceId,
    userId: user.id,
    name: 'test key',
    scopes: [...(options.scopes ?? SCOPES)],
    expiresAt: options.expiresAt ?? null,
  });
  if (role === 'member' || role === 'viewer') await setUserRole(em, { userId: user.id, role });
  return { workspaceId, userId: user.id, keyId: key.id, secret };
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined when the body is empty or not JSON. */
  body: T;
  text: string;
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly secret?: string,
  ) {}

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('GET', path, { headers });
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('POST', path, { body, headers });
  }
  patch<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('PATCH', path, { body, headers });
  }
  delete<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('DELETE', path, { headers });
  }

  /**
   * `path` is relative to /v1 unless it starts with `http`. `body` is sent as JSON unless `raw`
   * gives the exact bytes.
   */
  async request<T = any>(
    method: string,
    path: string,
    options: { body?: unknown; raw?: string | Buffer; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = {};
    if (this.secret) headers.authorization = `Bearer ${this.secret}`;
    let body: string | Buffer | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    Object.assign(headers, options.headers);
    const url = path.startsWith('http') ? path : `${this.baseUrl}/v1${path}`;
    const response = await fetch(url, { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }
}
