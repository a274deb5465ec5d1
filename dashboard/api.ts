// A small typed wrapper of fetch for /v1 and the dashboard's own endpoints. The session cookie
// goes with every request (same origin); every change carries the session's CSRF token. An error
// answer becomes an ApiFailure with the API's message and request_id, shown as such; an ended
// session sends the browser to sign-in.

export interface ErrorBody {
  error: { type: string; code: string; message: string; param: string | null };
  request_id: string;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null,
    readonly requestId: string | null,
  ) {
    super(message);
  }
}

let csrfToken = '';
export function setCsrfToken(token: string) {
  csrfToken = token;
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiFailure(
      0,
      'network_error',
      'The server could not be reached. Check the connection and retry.',
      null,
      null,
    );
  }
  const text = await response.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (!response.ok) {
    const failure = (data as ErrorBody | undefined)?.error;
    if (
      response.status === 401 &&
      failure?.code === 'session_missing' &&
      !path.startsWith('/dashboard/auth/')
    ) {
      toSignIn();
    }
    throw new ApiFailure(
      response.status,
      failure?.code ?? 'http_error',
      failure?.message ?? `The server answered ${response.status}.`,
      failure?.param ?? null,
      (data as ErrorBody | undefined)?.request_id ?? response.headers.get('X-Request-Id'),
    );
  }
  return data as T;
}

export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  del: <T>(path: string) => request<T>('DELETE', path),
};

/** `?a=1&b=2` from the values that are set. */
export function query(values: Record<string, string | number | null | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

// The API's objects, as far as the pages use them.

// The /v1 resources are the typed client's (clients/typescript, generated from /v1/openapi.json),
// so a page can never read a field the API does not send; requests still go through `request`
// above, which adds the session's CSRF token and turns errors into ApiFailure.
export type {
  Agent,
  AgentTool,
  AgentToolInput,
  Call,
  PhoneNumber,
  TestRun,
  TestScenario,
  ToolCall,
  ToolsSecret,
  TransferDestinationInput,
  Usage,
  WebhookEndpoint as Webhook,
  WebhookEndpointWithSecret as WebhookWithSecret,
} from '../clients/typescript/src/index.js';

import type { Call, Transcript } from '../clients/typescript/src/index.js';
export type CallAnalysis = NonNullable<Call['analysis']>;
export type TranscriptLine = Transcript['data'][number];

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export type Role = 'owner' | 'admin' | 'member' | 'viewer';

export interface Session {
  email: string;
  csrf_token: string;
  member: { user_id: string; workspace_id: string; workspace_name: string | null; role: Role } | null;
  temporal_ui_url: string | null;
  temporal_namespace: string;
  workspaces: { user_id: string; workspace_id: string; workspace_name: string | null; role: Role }[];
}

/** One agent turn's latency (GET /dashboard/api/calls/{id}/turns, the workflow's callProgress). */
export interface TurnLatency {
  index: number;
  firstTokenMs: number | null;
  firstSentenceMs: number | null;
  answerMs: number;
  fromSpeechEnd?: { transcriptMs: number; firstTokenMs: number; firstAudioMs: number | null };
}

export interface Voice {
  id: string;
  name: string;
  language: string;
  gender?: string;
}

export interface Delivery {
  id: string;
  event_type: string;
  status: string;
  response_status: number | null;
  attempts: number;
  error: string | null;
  trigger: string;
  resent_from: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface DeliveryAttempt {
  attempt: number;
  attempted_at: string;
  duration_ms: number;
  response_status: number | null;
  error: string | null;
  /** The start of the receiver's answer (200 characters), a success's too. */
  response_excerpt: string | null;
  trigger: string;
}

export interface CallEvent {
  id: string;
  type: string;
  created_at: string;
  deliveries: (Delivery & { webhook_id: string; url: string | null })[];
}

export interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  created_by: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  secret?: string;
}

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
];

export const CALL_EVENT_TYPES = ['call.started', 'call.completed', 'call.failed', 'call.transferred'];

/**
 * The session ended: off to sign-in, once. A page's other requests fail the same way a moment
 * later; navigating again for each would abort the navigation under way.
 */
let leavingForSignIn = false;
function toSignIn(): void {
  if (leavingForSignIn) return;
  leavingForSignIn = true;
  window.location.assign(`/sign-in?expired=1&next=${encodeURIComponent(window.location.pathname)}`);
}
