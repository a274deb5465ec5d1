import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

// A private CA and certificates it signs, made with openssl for a test: what an operator's own CA
// gives a self-hosted Temporal cluster and its clients.

export interface CertificatePair {
  cert: string;
  key: string;
}

export interface TestCertificates {
  ca: CertificatePair;
  /** The server's, for `dnsName` only (not its IP address: a client must name it). */
  server: CertificatePair;
  /** A client certificate the CA signed (mTLS). */
  client: CertificatePair;
  /** A client certificate another CA signed: refused by a server that trusts only `ca`. */
  stranger: CertificatePair;
}

export function makeTestCertificates(dir: string, dnsName: string): TestCertificates {
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const selfSigned = (name: string, subject: string): CertificatePair => {
    const pair = { cert: file(`${name}.pem`), key: file(`${name}.key`) };
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      subject,
      '-keyout',
      pair.key,
      '-out',
      pair.cert,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
    return pair;
  };
  const signed = (
    name: string,
    subject: string,
    by: CertificatePair,
    extensions: string,
  ): CertificatePair => {
    const pair = { cert: file(`${name}.pem`), key: file(`${name}.key`) };
    const request = file(`${name}.csr`);
    const extensionsFile = file(`${name}.ext`);
    writeFileSync(extensionsFile, extensions);
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', subject, '-keyout', pair.key, '-out', request);
    openssl(
      'x509',
      '-req',
      '-in',
      request,
      '-CA',
      by.cert,
      '-CAkey',
      by.key,
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      pair.cert,
      '-extfile',
      extensionsFile,
    );
    return pair;
  };
  const ca = selfSigned('ca', '/CN=Voice Agent Test CA');
  const other = selfSigned('other-ca', '/CN=Another CA');
  return {
    ca,
    server: signed(
      'server',
      `/CN=${dnsName}`,
      ca,
      `subjectAltName=DNS:${dnsName}\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n`,
    ),
    client: signed(
      'client',
      '/CN=voice-agent-workers',
      ca,
      'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n',
    ),
    stranger: signed(
      'stranger',
      '/CN=stranger',
      other,
      'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n',
    ),
  };
}
