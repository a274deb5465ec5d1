// Every setting the service reads, in one place. Names are fixed by
// The operations contract's settings (README.md, "Settings"); additions are documented in README.md.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  checkDestination,
  DEFAULT_DIALING_COUNTRIES,
  type DialingCountries,
  describeRefusal,
  parseDialingCountries,
} from './calls/destination-policy.js';
import { isE164 } from './e164.js';
import type { S3StoreSettings } from './recordings/recording-store.js';
import { SIMULATED_FRONT_DESK } from './voice-runtime/transfer-target.js';

/** The clone's folder (lib/..), which relative data paths are taken from whatever the working directory. */
const PROJECT_FOLDER = fileURLToPath(new URL('..', import.meta.url));

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface TemporalTlsSettings {
  clientCert?: { certPath: string; keyPath: string };
  caPath?: string;
  serverName?: string;
}

export interface Settings {
  host: string;
  port: number;
  /** DASHBOARD_URL: where people open the dashboard when the API sits behind a proxy or HTTPS. */
  dashboardUrl?: string;
  /** Unset: `npm start` and the CLI embed a PostgreSQL under .data/; api/main.ts and workers/main.ts refuse to start. */
  databaseUrl: string | undefined;
  /** Unset: the local dev server on 127.0.0.1:7233 that `npm start` runs. */
  temporalAddress: string;
  temporalAddressIsDefault: boolean;
  temporalNamespace: string;
  /**
   * TLS to Temporal, on when any of these is set (PEM file paths): TEMPORAL_TLS_CERT and
   * TEMPORAL_TLS_KEY, an mTLS client certificate (both or neither; Temporal Cloud's certificate
   * auth); TEMPORAL_TLS_CA, the CA that signed the server's certificate when it is not one the
   * system trusts (a self-hosted cluster with the operator's own CA); TEMPORAL_TLS_SERVER_NAME,
   * the name to verify the server's certificate against when the address does not carry it (an IP
   * address, a load balancer).
   */
  temporalTls: TemporalTlsSettings | undefined;
  /** TEMPORAL_API_KEY: a Temporal Cloud API key; the connection then uses TLS. */
  temporalApiKey: string | undefined;
  /** Prefix of every task queue name, so parallel test files never share workers. */
  taskQueuePrefix: string;
  webhooksAllowPrivateTargets: boolean;
  /**
   * TRUST_PROXY: how many reverse proxies stand in front of the API, each appending the address it
   * saw to X-Forwarded-For. 0 (unset, `false`): the header is ignored and the client is the
   * connection's peer; `true` is 1.
   */
  trustProxyHops: number;
  simTimeScale: number;
  logLevel: LogLevel;
  /** OpenAI-compatible chat-completions analysis; off unless ANALYSIS_LLM_URL is set. */
  analysisLlm: LlmEndpoint | undefined;
  /**
   * The voice runtime's language model, an OpenAI-compatible chat-completions endpoint (operations
   * contract section 7); off (the built-in scripted agent) unless VOICE_LLM_URL is set.
   */
  voiceLlm: LlmEndpoint | undefined;
  /**
   * TRANSFER_NUMBER: where an agent transfers a person who asks for a human when neither the model
   * nor the call's `metadata.transfer_to` names a number (E.164); `none`: nowhere. Unset: the call
   * simulator's front desk, while the simulator is the carrier.
   */
  transferNumber: string | null;
  /**
   * DIALING_COUNTRIES: the countries a workspace may dial unless `admin limits set
   * --dialing-countries` gives it its own (toll fraud: lib/calls/destination-policy.ts). `*`: every
   * country, high-cost numbers still refused.
   */
  dialingCountries: DialingCountries;
  /**
   * The speech ports (spec voice-media-v1 section 2). `local`: VOICE_SPEECH=local, the local speech
   * server is to be provisioned and started (scripts/local-speech-server.ts). `stt`/`tts`: from
   * VOICE_STT_URL / VOICE_TTS_URL; undefined when unset. With both unset and no local server, calls
   * stay text-only.
   */
  speech: { local: boolean; stt: SpeechEndpoint | undefined; tts: SpeechEndpoint | undefined };
  /** The media gateway (../spec/voice-media-v1.md sections 2 and 3, docs/voice.md). */
  media: MediaSettings;
  /**
   * RECORDINGS_DIR: where the media gateway writes each call's recording (`<call id>.wav`) and
   * the API reads it; relative paths are taken from the project folder, like the other .data paths.
   */
  recordingsDir: string;
  /**
   * RECORDINGS_STORE: `file` (RECORDINGS_DIR is the store) or `s3` (RECORDINGS_S3_*: the gateway
   * uploads each finished recording, the API reads it there; lib/recordings/s3-recording-store.ts).
   */
  recordingsStore: { kind: 'file' } | ({ kind: 's3' } & S3StoreSettings);
  /**
   * METRICS_PORT: a port of the process's own for `/metrics`, `/healthz` and `/readyz`
   * (lib/metrics/metrics-server.ts). The workers and the media gateway serve them only there; the
   * API serves them beside /v1, and with METRICS_PORT set, `/metrics` moves off the public port to it.
   * `N-M`: the first free port of the range, for processes that share a network namespace (the
   * API replicas of docker-compose.yml and start:cluster, which share their public port).
   */
  metricsPort: { first: number; last: number } | undefined;
}

/**
 * MEDIA_PORT, MEDIA_STREAMS_TOKEN, MEDIA_GATEWAY_URL, MEDIA_CONTROL_LISTEN, MEDIA_CONTROL_URL,
 * MEDIA_CONTROL_TOKEN, VOICE_ENDPOINTING_MS, VOICE_PREEMPTIVE_GENERATION and CARRIER.
 */
export interface MediaSettings {
  /** MEDIA_PORT: the gateway's public port: Media Streams (`/media/streams`) and health only. */
  port: number;
  /**
   * MEDIA_STREAMS_TOKEN: the secret a Media Streams client presents to open a new inbound stream
   * (`to`/`from`); it attaches to no existing call and opens nothing else. Unset: `npm start`
   * generates one at first start and keeps it in the data folder (scripts/media-streams-token.ts),
   * passing it on to what it starts.
   */
  streamsToken: string | undefined;
  /**
   * MEDIA_GATEWAY_URL: the media gateway's public address (`http://HOST:MEDIA_PORT`), whose
   * `/media/streams` the far ends of the calls placed here (the speaking simulator, the SIP side)
   * and the test panel's Talk connect to. Set (by `npm start` and `start:cluster` when speech is
   * configured: `http://127.0.0.1:MEDIA_PORT` unless given), outbound calls carry audio and the
   * simulator's far ends speak (docs/voice.md, "The simulator speaks"); unset, they are text-only.
   */
  gatewayUrl: string | undefined;
  /**
   * MEDIA_GATEWAY_URLS: several gateways' public addresses (`http://HOST:PORT`, comma-separated),
   * each one's control API at its next port; the calls placed here and Talk go to one that is not
   * draining (lib/media/gateway-placement.ts). Set, it is used in place of MEDIA_GATEWAY_URL and
   * MEDIA_CONTROL_URL for new calls; empty when unset.
   */
  gatewayUrls: string[];
  /**
   * MEDIA_CONTROL_LISTEN (default `127.0.0.1:<MEDIA_PORT+1>`): where the gateway serves its control
   * API and the carrier's status callbacks, off the public port.
   */
  controlListen: { host: string; port: number };
  /**
   * MEDIA_CONTROL_URL: where the workers, the API and the SIP side reach that control API, and the
   * gateway's name on the calls it holds (Call.mediaGateway); default `http://` and
   * MEDIA_CONTROL_LISTEN (a wildcard host as 127.0.0.1).
   */
  controlUrl: string;
  /**
   * MEDIA_CONTROL_TOKEN: the control API's secret (workers, API, SIP side), and the key each call's
   * own stream token is made with (lib/media/stream-token.ts). `npm start` generates and keeps it
   * when unset. Set, calls placed here carry audio through the gateway (with MEDIA_GATEWAY_URL).
   */
  controlToken: string | undefined;
  /** VOICE_ENDPOINTING_MS: silence after speech that ends the caller's turn (the silence rule). */
  endpointingMs: number;
  /**
   * How the caller's turn ends (docs/voice.md, "End of turn by a model"): VOICE_TURN_DETECTION
   * `model` (the default with VOICE_SPEECH=local) asks the speech server's end-of-turn model at a
   * pause, and from VOICE_TURN_PAUSE_MS (default 200) of silence on complete ends the turn, not
   * complete waits for more speech up to VOICE_TURN_MAX_MS (default 2000) of silence; `silence`
   * ends every turn after VOICE_ENDPOINTING_MS.
   */
  turnDetection: { mode: 'model' | 'silence'; pauseMs: number; maxMs: number };
  /**
   * VOICE_PREEMPTIVE_GENERATION (default true): while the caller pauses before their turn ends,
   * the media gateway asks the model for the answer ahead (docs/voice.md, "Hearing the turn's end
   * ahead"); false saves the requests thrown away when the caller goes on speaking.
   */
  preemptiveGeneration: boolean;
  /**
   * MEDIA_IDLE_TIMEOUT_MS (default 10000): a stream that sends no media this long, once its call
   * is taken, is the caller gone (a dropped NAT mapping, a sleeping laptop): the call ends
   * `caller_hangup` instead of waiting out the silence timeout.
   */
  idleTimeoutMs: number;
  /**
   * MEDIA_DRAIN_SECONDS (default 900): how long a gateway told to stop (SIGTERM) lets its live
   * calls finish before it exits (telephony spec section 5, media/gateway-drain.ts).
   */
  drainSeconds: number;
  /**
   * TRANSFER_MAX_MINUTES (default 60): the longest a bridged transfer lasts, the gateway's (a
   * Media Streams call, every warm transfer) and the SIP side's; then both sides are hung up.
   */
  transferMaxMinutes: number;
  /** CARRIER: how calls reach the telephone network: the simulator, or a SIP trunk (`sip`). */
  carrier: 'simulator' | 'sip';
  /** The SIP side of CARRIER=sip (../spec/voice-media-v1.md section 6, docs/sip.md). */
  sip: SipSettings;
}

/** SIP_LISTEN, SIP_PUBLIC_HOST, SIP_TRUNK_URI, SIP_USERNAME, SIP_PASSWORD, RTP_PORTS, SIP_CONTROL_URL. */
export interface SipSettings {
  /** SIP_LISTEN: UDP `host:port` of the service's SIP user agent. */
  listen: { host: string; port: number };
  /** SIP_PUBLIC_HOST: the address put in Contact and SDP; unset: the listen host. */
  publicHost: string;
  /** SIP_TRUNK_URI: where outbound INVITEs go (`sip:trunk.example.net:5060`); unset: no outbound calls. */
  trunkUri: string | undefined;
  /** SIP_USERNAME, SIP_PASSWORD: digest credentials the trunk asks for. */
  username: string | undefined;
  password: string | undefined;
  /** RTP_PORTS: UDP ports for media. */
  rtpPorts: { first: number; last: number };
  /**
   * SIP_CONTROL_URL: where the calls workers reach the SIP side's control API (loopback by
   * default). The SIP side listens on SIP_CONTROL_LISTEN, by default loopback at this URL's port.
   */
  controlUrl: string;
  /**
   * SIP_CONTROL_TOKEN: the secret of the SIP side's control API, which the calls workers present
   * (never MEDIA_STREAMS_TOKEN: that opens streams only). `npm start` generates and keeps it when
   * unset (scripts/media-streams-token.ts).
   */
  controlToken: string | undefined;
}

/** An OpenAI-compatible speech endpoint (`…/v1`), from `<PREFIX>_URL`, `_API_KEY`, `_MODEL`. */
export interface SpeechEndpoint {
  url: string;
  apiKey: string | undefined;
  model: string;
  /** One attempt of one request, to its last byte. */
  timeoutMs: number;
}

/** Fixed per-attempt limits: an utterance of a turn, or one sentence of the agent's. */
export const STT_TIMEOUT_MS = 15_000;
export const TTS_TIMEOUT_MS = 15_000;

/** An OpenAI-compatible chat-completions endpoint, from `<PREFIX>_URL`, `_API_KEY`, `_MODEL`, `_TIMEOUT_MS`. */
export interface LlmEndpoint {
  url: string;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
}

function bool(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  return ['1', 'true', 'yes', 'on'].includes(value.toLowerCase());
}

/** TRANSFER_MAX_MINUTES: above 0, at most a day (the SIP side refuses the same values: sip/config.go). */
function transferMaxMinutes(value: string | undefined): number {
  const minutes = positiveNumber('TRANSFER_MAX_MINUTES', value, 60);
  if (minutes > 24 * 60) throw new Error(`TRANSFER_MAX_MINUTES must be at most 1440, got "${value}"`);
  return minutes;
}

/**
 * VOICE_TURN_DETECTION (model | silence; model by default with speech: the local speech, or a
 * speech-to-text service at VOICE_STT_URL, which is asked for the model and, without one, leaves
 * each call to silence), VOICE_TURN_PAUSE_MS, VOICE_TURN_MAX_MS.
 */
function turnDetection(env: NodeJS.ProcessEnv): MediaSettings['turnDetection'] {
  const withSpeech = voiceSpeech(env.VOICE_SPEECH) || Boolean(env.VOICE_STT_URL);
  const value = env.VOICE_TURN_DETECTION || (withSpeech ? 'model' : 'silence');
  if (value !== 'model' && value !== 'silence') {
    throw new Error(`VOICE_TURN_DETECTION must be model or silence; got "${value}"`);
  }
  const pauseMs = positiveNumber('VOICE_TURN_PAUSE_MS', env.VOICE_TURN_PAUSE_MS, 200);
  const maxMs = positiveNumber('VOICE_TURN_MAX_MS', env.VOICE_TURN_MAX_MS, 2000);
  if (pauseMs < 200 || pauseMs >= maxMs) {
    throw new Error(
      `VOICE_TURN_PAUSE_MS must be at least 200 and below VOICE_TURN_MAX_MS (${maxMs}); got "${pauseMs}"`,
    );
  }
  return { mode: value, pauseMs, maxMs };
}

function positiveNumber(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${value}"`);
  return n;
}

/** `N` or `N-M`; unset or empty: undefined. */
function portRange(name: string, value: string | undefined): { first: number; last: number } | undefined {
  if (!value) return undefined;
  const match = /^(\d+)(?:-(\d+))?$/.exec(value.trim());
  const first = Number(match?.[1]);
  const last = Number(match?.[2] ?? match?.[1]);
  if (!match || first < 1 || last > 65535 || last < first) {
    throw new Error(`${name} must be a port or a range of ports like 9470-9479, got "${value}"`);
  }
  return { first, last };
}

function proxyHops(value: string | undefined): number {
  if (value === undefined || value === '' || value.toLowerCase() === 'false') return 0;
  if (value.toLowerCase() === 'true') return 1;
  if (!/^\d{1,2}$/.test(value)) {
    throw new Error(
      `TRUST_PROXY must be false, true or the number of proxies in front of the API; got "${value}"`,
    );
  }
  return Number(value);
}

function temporalTls(env: NodeJS.ProcessEnv): Settings['temporalTls'] {
  const certPath = env.TEMPORAL_TLS_CERT || undefined;
  const keyPath = env.TEMPORAL_TLS_KEY || undefined;
  const caPath = env.TEMPORAL_TLS_CA || undefined;
  const serverName = env.TEMPORAL_TLS_SERVER_NAME || undefined;
  if (Boolean(certPath) !== Boolean(keyPath)) {
    throw new Error('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together: set both (PEM files) or neither');
  }
  if (!certPath && !caPath && !serverName) return undefined;
  return {
    ...(certPath && keyPath ? { clientCert: { certPath, keyPath } } : {}),
    ...(caPath ? { caPath } : {}),
    ...(serverName ? { serverName } : {}),
  };
}

function recordingsStore(env: NodeJS.ProcessEnv): Settings['recordingsStore'] {
  const kind = env.RECORDINGS_STORE || 'file';
  if (kind === 'file') return { kind };
  if (kind !== 's3') throw new Error(`RECORDINGS_STORE must be file or s3; got "${kind}"`);
  const bucket = env.RECORDINGS_S3_BUCKET;
  if (!bucket) throw new Error('RECORDINGS_STORE=s3 needs RECORDINGS_S3_BUCKET');
  const [accessKeyId, secretAccessKey] = [
    env.RECORDINGS_S3_ACCESS_KEY_ID,
    env.RECORDINGS_S3_SECRET_ACCESS_KEY,
  ];
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    // Named, never shown: the keys are secrets.
    throw new Error(
      'RECORDINGS_S3_ACCESS_KEY_ID and RECORDINGS_S3_SECRET_ACCESS_KEY go together: set both or neither',
    );
  }
  const endpoint = env.RECORDINGS_S3_ENDPOINT || undefined;
  if (endpoint && !/^https?:\/\/[^/]+/.test(endpoint)) {
    throw new Error(`RECORDINGS_S3_ENDPOINT must be an http(s) URL; got "${endpoint}"`);
  }
  return {
    kind,
    endpoint,
    bucket,
    region: env.RECORDINGS_S3_REGION || 'us-east-1',
    accessKeyId: accessKeyId || undefined,
    secretAccessKey: secretAccessKey || undefined,
  };
}

function carrier(value: string | undefined): MediaSettings['carrier'] {
  if (value === undefined || value === '' || value === 'simulator') return 'simulator';
  if (value === 'sip') return 'sip';
  throw new Error(`CARRIER must be simulator or sip; got "${value}"`);
}

/** MEDIA_CONTROL_LISTEN, MEDIA_CONTROL_URL and MEDIA_CONTROL_TOKEN: the gateway's control API, on loopback by default. */
function mediaControl(
  env: NodeJS.ProcessEnv,
): Pick<MediaSettings, 'controlListen' | 'controlUrl' | 'controlToken'> {
  const mediaPort = positiveNumber('MEDIA_PORT', env.MEDIA_PORT, 8090);
  const controlListen = hostAndPort(
    'MEDIA_CONTROL_LISTEN',
    env.MEDIA_CONTROL_LISTEN || `127.0.0.1:${mediaPort + 1}`,
  );
  const reachable = ['0.0.0.0', '::', ''].includes(controlListen.host) ? '127.0.0.1' : controlListen.host;
  const host = reachable.includes(':') ? `[${reachable}]` : reachable;
  const controlUrl = (env.MEDIA_CONTROL_URL || `http://${host}:${controlListen.port}`).replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s/]+$/.test(controlUrl)) {
    throw new Error(`MEDIA_CONTROL_URL must be http://HOST:PORT, got "${controlUrl}"`);
  }
  return { controlListen, controlUrl, controlToken: secret(env, 'MEDIA_CONTROL_TOKEN') };
}

/** MEDIA_GATEWAY_URLS: public addresses with their ports (the control API is at the next one). */
function gatewayUrls(value: string | undefined): string[] {
  const urls = (value ?? '')
    .split(',')
    .map((url) => url.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  for (const url of urls) {
    if (!/^https?:\/\/[^\s/:]+:\d+$/.test(url)) {
      throw new Error(`MEDIA_GATEWAY_URLS must be http://HOST:PORT addresses, comma-separated; got "${url}"`);
    }
  }
  return urls;
}

/**
 * Secret `name`, else the contents of the file `<name>_FILE` names, else unset. Compose keeps the
 * control tokens it generates in a volume (docker-compose.yml, service `secrets`); `npm start`
 * passes them in the environment.
 */
function secret(env: NodeJS.ProcessEnv, name: string): string | undefined {
  if (env[name]) return env[name];
  const file = env[`${name}_FILE`];
  if (!file) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new Error(`${name}_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code})`);
  }
  if (!text) throw new Error(`${name}_FILE: ${file} is empty`);
  return text;
}

/** `HOST:PORT` (an IPv6 host in brackets) of setting `name`. */
function hostAndPort(name: string, value: string): { host: string; port: number } {
  const match = /^(.*):(\d+)$/.exec(value);
  const port = Number(match?.[2]);
  if (!match?.[1] || port < 1 || port > 65535) {
    throw new Error(`${name} must be HOST:PORT, e.g. 127.0.0.1:5060; got "${value}"`);
  }
  return { host: match[1].replace(/^\[(.*)\]$/, '$1'), port };
}

function sipSettings(env: NodeJS.ProcessEnv): SipSettings {
  // Loopback by default: a public address goes with SIP_TRUSTED_SOURCES (the SIP side checks it).
  const { host, port } = hostAndPort('SIP_LISTEN', env.SIP_LISTEN || '127.0.0.1:5060');
  const rtpPorts = portRange('RTP_PORTS', env.RTP_PORTS || '20000-20999')!;
  if (rtpPorts.last <= rtpPorts.first) {
    throw new Error(`RTP_PORTS must be a range of at least two ports, got "${env.RTP_PORTS}"`);
  }
  const trunkUri = env.SIP_TRUNK_URI || undefined;
  if (trunkUri !== undefined && !/^sips?:[^\s]+$/.test(trunkUri)) {
    throw new Error(`SIP_TRUNK_URI must be a SIP URI like sip:trunk.example.net:5060; got "${trunkUri}"`);
  }
  return {
    listen: { host, port },
    publicHost: env.SIP_PUBLIC_HOST || host,
    trunkUri,
    username: env.SIP_USERNAME || undefined,
    password: env.SIP_PASSWORD || undefined,
    rtpPorts,
    controlUrl: env.SIP_CONTROL_URL || 'http://127.0.0.1:8092',
    controlToken: secret(env, 'SIP_CONTROL_TOKEN'),
  };
}

function transferNumber(value: string | undefined): string | null {
  if (value === undefined || value === '') return SIMULATED_FRONT_DESK;
  if (value.toLowerCase() === 'none') return null;
  if (!isE164(value))
    throw new Error(`TRANSFER_NUMBER must be an E.164 number such as +4722000100, or none; got "${value}"`);
  // Its country is each workspace's to allow, when a call is transferred; a high-cost or emergency
  // number is never a front desk.
  const refusal = checkDestination(value, { dialingCountries: '*' });
  if (refusal) throw new Error(`TRANSFER_NUMBER: ${describeRefusal(value, refusal)}`);
  return value;
}

/** The endpoint the `prefix`_* variables name; off (undefined) unless `prefix`_URL is set. */
function llmEndpoint(
  env: NodeJS.ProcessEnv,
  prefix: string,
  defaultTimeoutMs: number,
): LlmEndpoint | undefined {
  const url = env[`${prefix}_URL`];
  if (!url) return undefined;
  return {
    url,
    apiKey: env[`${prefix}_API_KEY`] || undefined,
    model: env[`${prefix}_MODEL`] || 'gpt-4o-mini',
    timeoutMs: positiveNumber(`${prefix}_TIMEOUT_MS`, env[`${prefix}_TIMEOUT_MS`], defaultTimeoutMs),
  };
}

function voiceSpeech(value: string | undefined): boolean {
  if (value === undefined || value === '') return false;
  if (value === 'local') return true;
  throw new Error(`VOICE_SPEECH must be local or unset; got "${value}"`);
}

/** The endpoint the `prefix`_* variables name; off (undefined) unless `prefix`_URL is set. */
function speechEndpoint(
  env: NodeJS.ProcessEnv,
  prefix: 'VOICE_STT' | 'VOICE_TTS',
  defaultModel: string,
  timeoutMs: number,
): SpeechEndpoint | undefined {
  const url = env[`${prefix}_URL`];
  if (!url) return undefined;
  const refuse = (what: string) =>
    new Error(
      `${prefix}_URL must be the http(s) base URL of an OpenAI-compatible API, such as https://api.openai.com/v1 (a key goes in ${prefix}_API_KEY); got ${what}`,
    );
  // The value itself is never repeated: it may hold a key.
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse('something that is not a URL');
  }
  if (!['http:', 'https:'].includes(parsed.protocol)) throw refuse(`a URL of scheme "${parsed.protocol}"`);
  if (parsed.username || parsed.password) throw refuse('a URL with a user name or password in it');
  return {
    url: url.replace(/\/+$/, ''),
    apiKey: env[`${prefix}_API_KEY`] || undefined,
    model: env[`${prefix}_MODEL`] || defaultModel,
    timeoutMs,
  };
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const logLevel = (env.LOG_LEVEL ?? 'info').toLowerCase();
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) {
    throw new Error(`LOG_LEVEL must be one of debug, info, warn, error; got "${env.LOG_LEVEL}"`);
  }
  return {
    host: env.HOST || '127.0.0.1',
    port: positiveNumber('PORT', env.PORT, 8080),
    dashboardUrl: env.DASHBOARD_URL || undefined,
    databaseUrl: env.DATABASE_URL || undefined,
    temporalAddress: env.TEMPORAL_ADDRESS || '127.0.0.1:7233',
    temporalAddressIsDefault: !env.TEMPORAL_ADDRESS,
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    temporalTls: temporalTls(env),
    temporalApiKey: env.TEMPORAL_API_KEY || undefined,
    taskQueuePrefix: env.TASK_QUEUE_PREFIX || '',
    webhooksAllowPrivateTargets: bool(env.WEBHOOKS_ALLOW_PRIVATE_TARGETS, false),
    trustProxyHops: proxyHops(env.TRUST_PROXY),
    simTimeScale: positiveNumber('SIM_TIME_SCALE', env.SIM_TIME_SCALE, 1),
    logLevel: logLevel as LogLevel,
    analysisLlm: llmEndpoint(env, 'ANALYSIS_LLM', 30_000),
    voiceLlm: llmEndpoint(env, 'VOICE_LLM', 10_000),
    transferNumber: transferNumber(env.TRANSFER_NUMBER),
    dialingCountries: env.DIALING_COUNTRIES
      ? parseDialingCountries(env.DIALING_COUNTRIES, 'DIALING_COUNTRIES')
      : DEFAULT_DIALING_COUNTRIES,
    speech: {
      local: voiceSpeech(env.VOICE_SPEECH),
      stt: speechEndpoint(env, 'VOICE_STT', 'whisper-1', STT_TIMEOUT_MS),
      tts: speechEndpoint(env, 'VOICE_TTS', 'tts-1', TTS_TIMEOUT_MS),
    },
    media: {
      port: positiveNumber('MEDIA_PORT', env.MEDIA_PORT, 8090),
      streamsToken: env.MEDIA_STREAMS_TOKEN || undefined,
      gatewayUrl: env.MEDIA_GATEWAY_URL || undefined,
      gatewayUrls: gatewayUrls(env.MEDIA_GATEWAY_URLS),
      ...mediaControl(env),
      endpointingMs: positiveNumber('VOICE_ENDPOINTING_MS', env.VOICE_ENDPOINTING_MS, 600),
      turnDetection: turnDetection(env),
      preemptiveGeneration: bool(env.VOICE_PREEMPTIVE_GENERATION, true),
      idleTimeoutMs: positiveNumber('MEDIA_IDLE_TIMEOUT_MS', env.MEDIA_IDLE_TIMEOUT_MS, 10_000),
      drainSeconds: positiveNumber('MEDIA_DRAIN_SECONDS', env.MEDIA_DRAIN_SECONDS, 900),
      transferMaxMinutes: transferMaxMinutes(env.TRANSFER_MAX_MINUTES),
      carrier: carrier(env.CARRIER),
      sip: sipSettings(env),
    },
    recordingsDir: path.resolve(PROJECT_FOLDER, env.RECORDINGS_DIR || '.data/recordings'),
    recordingsStore: recordingsStore(env),
    metricsPort: portRange('METRICS_PORT', env.METRICS_PORT),
  };
}
