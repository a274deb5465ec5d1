import { readFileSync } from 'node:fs';
import type { Settings } from './settings.js';

// How every process of the service reaches Temporal: the API's client, the workers' native
// connection and client, the operator CLI and the start scripts. A local server needs only the
// address; Temporal Cloud or a secured cluster also needs an mTLS client certificate
// (TEMPORAL_TLS_CERT + TEMPORAL_TLS_KEY) or an API key (TEMPORAL_API_KEY), and then TLS; a
// self-hosted cluster whose certificates come from the operator's own CA also TEMPORAL_TLS_CA,
// and TEMPORAL_TLS_SERVER_NAME when the address is not the name in the server's certificate.

export interface TemporalTlsOptions {
  clientCertPair?: { crt: Buffer; key: Buffer };
  /** The CA that signed the server's certificate; absent: the system's roots. */
  serverRootCACertificate?: Buffer;
  /** The name the server's certificate must carry; absent: the address's host. */
  serverNameOverride?: string;
}

export interface TemporalConnectionOptions {
  address: string;
  /** Absent: plaintext. `true`: TLS with the system's roots (an API key alone). */
  tls?: true | TemporalTlsOptions;
  apiKey?: string;
}

/**
 * The options for `Connection.connect` (@temporalio/client) and `NativeConnection.connect`
 * (@temporalio/worker), which take the same `address`, `tls` and `apiKey`. The certificate files
 * are read here, so a wrong path fails at start with the setting's name.
 */
export function temporalConnectionOptions(
  settings: Pick<Settings, 'temporalAddress' | 'temporalTls' | 'temporalApiKey'>,
): TemporalConnectionOptions {
  const options: TemporalConnectionOptions = { address: settings.temporalAddress };
  const tls = settings.temporalTls;
  if (tls) {
    options.tls = {
      ...(tls.clientCert
        ? {
            clientCertPair: {
              crt: readPem('TEMPORAL_TLS_CERT', tls.clientCert.certPath),
              key: readPem('TEMPORAL_TLS_KEY', tls.clientCert.keyPath),
            },
          }
        : {}),
      ...(tls.caPath ? { serverRootCACertificate: readPem('TEMPORAL_TLS_CA', tls.caPath) } : {}),
      ...(tls.serverName ? { serverNameOverride: tls.serverName } : {}),
    };
  }
  if (settings.temporalApiKey) {
    options.apiKey = settings.temporalApiKey;
    options.tls ??= true;
  }
  return options;
}

function readPem(name: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new Error(`${name}=${file} cannot be read: ${(error as Error).message}`);
  }
}
