import createFetchClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

// The typed client of the Voice Agent API v1: requests and answers typed from the API's own
// OpenAPI document (schema.d.ts, generated), sent through openapi-fetch, and the check of a
// webhook delivery's Service-Signature and of a tool request's Voice-Signature. Runs wherever
// fetch and Web Crypto exist (Node 20+, browsers, edge runtimes); it imports nothing from the
// API's code.

export type { components, operations, paths };

export type VoiceAgentClient = Client<paths, 'application/json'>;

export interface ClientConfig {
  /** The API's address, e.g. `https://api.example.com/v1` (`/v1` is added when missing). */
  baseUrl: string;
  /** An API key, `svc_live_…`; sent as `Authorization: Bearer …` on every request. */
  apiKey: string;
  /** Another fetch (tests, proxies, retries). Default: the global fetch. */
  fetch?: (input: Request) => Promise<Response>;
  /** Headers added to every request. */
  headers?: Record<string, string>;
}

/**
 * A client whose methods take the document's paths: `client.GET('/agents/{agent_id}', { params:
 * { path: { agent_id } } })` answers `{ data, error, response }`, where `data` is the typed body
 * of a 2xx answer and `error` the spec's error body (`error.code`, `error.param`, `request_id`).
 */
export function createClient(config: ClientConfig): VoiceAgentClient {
  const trimmed = config.baseUrl.replace(/\/+$/, '');
  const baseUrl = trimmed.endsWith('/v1') ? trimmed : `${trimmed}/v1`;
  return createFetchClient<paths, 'application/json'>({
    baseUrl,
    ...(config.fetch ? { fetch: config.fetch } : {}),
    headers: { ...config.headers, Authorization: `Bearer ${config.apiKey}` },
  });
}

type JsonOf<R> = R extends { content: { 'application/json': infer Body } } ? Body : never;
type RequestJsonOf<O> = O extends { requestBody?: { content: { 'application/json': infer Body } } }
  ? Body
  : never;

/** The JSON body of an operation's answer with `status`. */
export type ResponseBody<
  Op extends keyof operations,
  Status extends keyof operations[Op]['responses'],
> = JsonOf<operations[Op]['responses'][Status]>;

/** The JSON body an operation takes. */
export type RequestBody<Op extends keyof operations> = RequestJsonOf<operations[Op]>;

/** The spec's error body: `{ error: { type, code, message, param }, request_id }`. */
export type ApiError = components['schemas']['Error'];

export type Agent = ResponseBody<'getAgent', 200>;
export type AgentCreate = RequestBody<'createAgent'>;
export type AgentUpdate = RequestBody<'updateAgent'>;
/** One of an agent's tools, as the API shows it. */
export type AgentTool = Agent['tools'][number];
/** One of an agent's tools as POST and PATCH /agents take it. */
export type AgentToolInput = NonNullable<AgentCreate['tools']>[number];
/** A number the agent may transfer a call to. */
export type TransferDestination = Agent['transfer_destinations'][number];
export type TransferDestinationInput = NonNullable<AgentCreate['transfer_destinations']>[number];
/** What each call of the agent must produce: data by a JSON Schema and a verdict on success criteria. */
export type AnalysisPlan = NonNullable<Agent['analysis_plan']>;
/** What the agent does when a machine answers an outbound phone call. */
export type VoicemailSettings = Agent['voicemail'];
/** Whether the agent may press keys on the call (`send_digits`). */
export type KeypadSettings = Agent['keypad'];
export type ToolsSecret = ResponseBody<'createAgentToolsSecret', 200>;
export type ToolCall = ResponseBody<'listCallToolCalls', 200>['data'][number];
export type Call = ResponseBody<'getCall', 200>;
export type CallAnalysis = NonNullable<Call['analysis']>;
/** The transfer a call tried, and how it went. */
export type CallTransfer = NonNullable<Call['transfer']>;
/** Who answered an outbound phone call with voicemail detection. */
export type AnsweredBy = NonNullable<Call['answered_by']>;
export type CallCreate = RequestBody<'createCall'>;
export type Transcript = ResponseBody<'getCallTranscript', 200>;
/** The answer of DELETE /calls/{call_id}/recording. The recording itself (GET) is `audio/wav` bytes. */
export type RecordingDeleted = ResponseBody<'deleteCallRecording', 200>;
export type PhoneNumber = ResponseBody<'getPhoneNumber', 200>;
export type WebhookEndpoint = ResponseBody<'getWebhook', 200>;
/** As created and rotated: with the signing secret. */
export type WebhookEndpointWithSecret = ResponseBody<'createWebhook', 201>;
export type WebhookDelivery = ResponseBody<'testWebhook', 202>;
export type WebhookRecovery = ResponseBody<'getWebhookRecovery', 200>;
export type Usage = ResponseBody<'getUsage', 200>;
export type TestRun = ResponseBody<'getTestRun', 200>;
export type TestRunCreate = RequestBody<'createTestRun'>;
export type TestScenario = TestRunCreate['scenarios'][number];
export type ApiKeyInfo = ResponseBody<'getMe', 200>;

export { TOOL_SIGNATURE_HEADER, verifyToolRequestSignature } from './tool-request-signature.js';
export {
  SIGNATURE_TOLERANCE_SECONDS,
  type SignatureCheck,
  type SignatureInput,
  verifyWebhookSignature,
} from './webhook-signature.js';
