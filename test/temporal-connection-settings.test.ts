import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { loadSettings } from '../lib/settings.js';
import { temporalConnectionOptions } from '../lib/temporal-connection.js';

// TEMPORAL_TLS_CERT / TEMPORAL_TLS_KEY (mTLS) and TEMPORAL_API_KEY: how the service reaches
// Temporal Cloud or a secured cluster (README "Production").

const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-tls-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const cert = path.join(dir, 'client.pem');
const key = path.join(dir, 'client.key');
writeFileSync(cert, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
writeFileSync(key, '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n');

test('a local server: the address alone, plaintext', () => {
  const settings = loadSettings({});
  assert.equal(settings.temporalTls, undefined);
  assert.equal(settings.temporalApiKey, undefined);
  assert.deepEqual(temporalConnectionOptions(settings), { address: '127.0.0.1:7233' });
});

test('mTLS: the certificate and key files are read into the client certificate pair', () => {
  const settings = loadSettings({
    TEMPORAL_ADDRESS: 'acme.a1b2c.tmprl.cloud:7233',
    TEMPORAL_NAMESPACE: 'acme.a1b2c',
    TEMPORAL_TLS_CERT: cert,
    TEMPORAL_TLS_KEY: key,
  });
  assert.deepEqual(settings.temporalTls, { clientCert: { certPath: cert, keyPath: key } });
  const options = temporalConnectionOptions(settings);
  assert.equal(options.address, 'acme.a1b2c.tmprl.cloud:7233');
  assert.ok(options.tls && options.tls !== true);
  assert.match(options.tls.clientCertPair?.crt.toString() ?? '', /BEGIN CERTIFICATE/);
  assert.match(options.tls.clientCertPair?.key.toString() ?? '', /BEGIN PRIVATE KEY/);
  assert.equal(
    options.tls.serverRootCACertificate,
    undefined,
    "Temporal Cloud's certificate: the system's roots",
  );
  assert.equal(options.apiKey, undefined);
});

test('an API key: sent as the key, over TLS', () => {
  const settings = loadSettings({
    TEMPORAL_ADDRESS: 'us-east-1.aws.api.temporal.io:7233',
    TEMPORAL_API_KEY: 'key-123',
  });
  assert.deepEqual(temporalConnectionOptions(settings), {
    address: 'us-east-1.aws.api.temporal.io:7233',
    apiKey: 'key-123',
    tls: true,
  });
});

test('a certificate without its key (or the other way round) is refused at start', () => {
  assert.throws(
    () => loadSettings({ TEMPORAL_TLS_CERT: cert }),
    /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together/,
  );
  assert.throws(
    () => loadSettings({ TEMPORAL_TLS_KEY: key }),
    /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together/,
  );
});

test('a certificate file that cannot be read names the setting', () => {
  const settings = loadSettings({ TEMPORAL_TLS_CERT: path.join(dir, 'missing.pem'), TEMPORAL_TLS_KEY: key });
  assert.throws(() => temporalConnectionOptions(settings), /TEMPORAL_TLS_CERT=.*missing\.pem cannot be read/);
});

test("a private CA and a server name: the CA's certificate is read, the name checked against the server's", () => {
  const ca = path.join(dir, 'ca.pem');
  writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n');
  const settings = loadSettings({
    TEMPORAL_ADDRESS: '10.0.0.7:7233',
    TEMPORAL_TLS_CERT: cert,
    TEMPORAL_TLS_KEY: key,
    TEMPORAL_TLS_CA: ca,
    TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
  });
  assert.deepEqual(settings.temporalTls, {
    clientCert: { certPath: cert, keyPath: key },
    caPath: ca,
    serverName: 'temporal.internal',
  });
  const options = temporalConnectionOptions(settings);
  assert.ok(options.tls && options.tls !== true);
  assert.match(options.tls.serverRootCACertificate?.toString() ?? '', /MIIC/);
  assert.equal(options.tls.serverNameOverride, 'temporal.internal');
  // A CA alone is server-verified TLS without a client certificate.
  const serverOnly = temporalConnectionOptions(loadSettings({ TEMPORAL_TLS_CA: ca }));
  assert.ok(serverOnly.tls && serverOnly.tls !== true);
  assert.equal(serverOnly.tls.clientCertPair, undefined);
  assert.throws(
    () => temporalConnectionOptions(loadSettings({ TEMPORAL_TLS_CA: path.join(dir, 'nope.pem') })),
    /TEMPORAL_TLS_CA=.*nope\.pem cannot be read/,
  );
});
