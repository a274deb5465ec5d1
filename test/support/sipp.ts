import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { freePort } from '../../scripts/processes.js';

// Debian's sipp (package sip-tester) as a far end that does not answer: it takes one INVITE,
// rings (180), then refuses it with `status`, or (`status` 'ring') rings until the caller CANCELs
// (200 to the CANCEL, 487 to the INVITE), or ('digest') asks for credentials first. Its exit code says whether the scenario ran as written:
// 0 only when everything it expected came (for 'ring': the CANCEL).

export interface SippFarEnd {
  port: number;
  /** sipp's exit code once its one call is over. */
  exited: Promise<number | null>;
  output(): string;
  stop(): void;
}

const HEADERS = `[last_Via:]
[last_From:]
[last_To:];tag=[pid]SIPpTag[call_number]
[last_Call-ID:]`;

const response = (statusLine: string, cseq = '[last_CSeq:]') => `  <send><![CDATA[
SIP/2.0 ${statusLine}
${HEADERS}
${cseq}
Contact: <sip:[local_ip]:[local_port];transport=[transport]>
Content-Length: 0

]]></send>`;

/**
 * Asks for digest credentials (401; sipp checks an `Authorization` header only, so not 407), then
 * answers busy (486) when they are `user`/`secret`, else 403.
 */
const DIGEST = `  <send><![CDATA[
SIP/2.0 401 Unauthorized
${HEADERS}
[last_CSeq:]
WWW-Authenticate: Digest realm="trunk.test", nonce="4c2b8f3a[pid]", algorithm=MD5
Content-Length: 0

]]></send>
  <recv request="ACK"/>
  <recv request="INVITE">
    <action><verifyauth assign_to="authorized" username="user" password="secret"/></action>
  </recv>
  <nop next="good" test="authorized"/>
${response('403 Forbidden')}
  <recv request="ACK" next="end"/>
  <label id="good"/>
${response('486 Busy Here')}
  <recv request="ACK"/>
  <label id="end"/>`;

function scenario(status: number | 'ring' | 'digest'): string {
  if (status === 'digest') return wrap(status, DIGEST);
  const ringing = response('180 Ringing');
  const end =
    status === 'ring'
      ? `  <recv request="CANCEL">
    <action><ereg regexp="[0-9]+" search_in="hdr" header="CSeq:" assign_to="cseq"/></action>
  </recv>
${response('200 OK')}
${response('487 Request Terminated', 'CSeq: [$cseq] INVITE')}
  <recv request="ACK"/>`
      : `  <pause milliseconds="300"/>
${response(`${status} Refused`)}
  <recv request="ACK"/>`;
  return wrap(status, `${ringing}\n${end}`);
}

function wrap(name: number | string, steps: string): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<!DOCTYPE scenario SYSTEM "sipp.dtd">
<scenario name="far end ${name}">
  <recv request="INVITE"/>
${steps}
</scenario>
`;
}

export async function startSippFarEnd(dir: string, status: number | 'ring' | 'digest'): Promise<SippFarEnd> {
  const file = path.join(dir, `sipp-${status}.xml`);
  await writeFile(file, scenario(status));
  const port = await freePort();
  const child: ChildProcess = spawn(
    'sipp',
    ['-sf', file, '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-nostdin', '-timeout', '120s'],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-5000);
    });
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // sipp binds at once; a moment for it to be listening.
  await new Promise((resolve) => setTimeout(resolve, 300));
  return { port, exited, output: () => output, stop: () => child.kill('SIGKILL') };
}

const INVITE = (cseq: number) => `  <send><![CDATA[
INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: sipp <sip:+4791230099@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
To: <sip:[service]@[remote_ip]:[remote_port]>
Call-ID: [call_id]
CSeq: ${cseq} INVITE
Contact: sip:sipp@[local_ip]:[local_port]
Max-Forwards: 70
Content-Type: application/sdp
Content-Length: [len]

v=0
o=user1 53655765 2353687637 IN IP[local_ip_type] [local_ip]
s=-
c=IN IP[media_ip_type] [media_ip]
t=0 0
m=audio [media_port] RTP/AVP 0
a=rtpmap:0 PCMU/8000

]]></send>`;

/** The ACK of an INVITE refused with a final non-2xx answer (its transaction's own, so the same Via). */
const REFUSAL_ACK = (cseq: number) => `  <send><![CDATA[
ACK sip:[service]@[remote_ip]:[remote_port] SIP/2.0
[last_Via:]
From: sipp <sip:+4791230099@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
[last_To:]
Call-ID: [call_id]
CSeq: ${cseq} ACK
Max-Forwards: 70
Content-Length: 0

]]></send>`;

const IN_DIALOG = (method: string, cseq: number) => `  <send><![CDATA[
${method} sip:[service]@[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: sipp <sip:+4791230099@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
Call-ID: [call_id]
CSeq: ${cseq} ${method}
Contact: sip:sipp@[local_ip]:[local_port]
Max-Forwards: 70
Content-Length: 0

]]></send>`;

/**
 * A caller that sends one INVITE to `user` at 127.0.0.1:`port`, then, once it is being tried (100),
 * a second INVITE of the same Call-ID (a new branch, not a retransmission), which must be refused
 * 482 (and ACKed) while the first is answered 200; then ACK, and BYE a second later. Resolves with sipp's exit code (0: as written).
 */
export async function runSippDoubleInvite(
  dir: string,
  target: { port: number; user: string },
): Promise<{ code: number | null; output: string }> {
  const file = path.join(dir, 'sipp-double-invite.xml');
  await writeFile(
    file,
    `<?xml version="1.0" encoding="ISO-8859-1" ?>
<!DOCTYPE scenario SYSTEM "sipp.dtd">
<scenario name="double INVITE">
${INVITE(1)}
  <recv response="100"/>
${INVITE(2)}
  <recv response="482"/>
${REFUSAL_ACK(2)}
  <recv response="180" optional="true"/>
  <recv response="200" rrs="true"/>
${IN_DIALOG('ACK', 1)}
  <pause milliseconds="1000"/>
${IN_DIALOG('BYE', 3)}
  <recv response="200"/>
</scenario>
`,
  );
  const { code, output } = await runCaller(dir, file, { ...target, localIp: '127.0.0.1', calls: 1 });
  const errors = await readFile(path.join(dir, 'sipp-double-invite_errors.log'), 'utf8').catch(() => '');
  return { code, output: `${output}\n${errors}` };
}

/** sipp as a caller of `calls` calls (all at once) on `file`'s scenario; its exit code and the end of its output. */
async function runCaller(
  dir: string,
  file: string,
  target: { port: number; user: string; localIp: string; calls: number },
  extra: string[] = [],
): Promise<{ code: number | null; output: string }> {
  const [port, mediaPort] = [await freePort(), await freePort()];
  const child = spawn(
    'sipp',
    [
      `127.0.0.1:${target.port}`,
      ...['-sf', file, '-s', target.user, '-i', target.localIp, '-p', String(port), '-mp', String(mediaPort)],
      ...['-m', String(target.calls), '-l', String(target.calls), '-r', String(target.calls), '-rp', '100'],
      ...['-nostdin', '-timeout', '30s', '-trace_err', '-trace_msg', ...extra],
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-5000);
    });
  }
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exit) => resolve(exit)));
  return { code, output };
}

/**
 * A caller that sends `calls` INVITEs to `user` at 127.0.0.1:`port` from `localIp` (another
 * loopback address is another source), all at once, each with its own Call-ID. One that is
 * refused (403, 480, 503) is ACKed; one that is answered is ACKed and hung up (BYE) half a second
 * later. Resolves with the final status each INVITE got, in the order they came, read from sipp's
 * message trace.
 */
export async function runSippInvites(
  dir: string,
  target: { port: number; user: string; localIp: string; calls: number },
): Promise<{ code: number | null; statuses: number[]; trace: string; output: string }> {
  const name = `sipp-invites-${target.localIp.replace(/\W/g, '-')}-${Date.now()}`;
  const file = path.join(dir, `${name}.xml`);
  await writeFile(
    file,
    `<?xml version="1.0" encoding="ISO-8859-1" ?>
<!DOCTYPE scenario SYSTEM "sipp.dtd">
<scenario name="INVITEs">
${INVITE(1)}
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="403" optional="true" next="refused"/>
  <recv response="480" optional="true" next="refused"/>
  <recv response="503" optional="true" next="refused"/>
  <recv response="200" rrs="true"/>
${IN_DIALOG('ACK', 1)}
  <pause milliseconds="500"/>
${IN_DIALOG('BYE', 2)}
  <recv response="200" next="end"/>
  <label id="refused"/>
${REFUSAL_ACK(1)}
  <label id="end"/>
</scenario>
`,
  );
  const { code, output } = await runCaller(dir, file, target, ['-message_file', `${name}_messages.log`]);
  const messages = await readFile(path.join(dir, `${name}_messages.log`), 'utf8').catch(() => '');
  // Final answers to the INVITEs: `SIP/2.0 NNN` status lines of CSeq 1 INVITE, 1xx left out.
  // The trace holds each message after a line of dashes and the time.
  const statuses = messages
    .split(/^-{10,}.*$/m)
    .filter((message) => /^SIP\/2\.0 [2-6]\d\d/m.test(message) && /^CSeq:\s*1 INVITE/im.test(message))
    .map((message) => Number(/^SIP\/2\.0 (\d{3})/m.exec(message)![1]));
  const errors = await readFile(path.join(dir, `${name}_errors.log`), 'utf8').catch(() => '');
  return { code, statuses, trace: messages, output: `${output}\n${errors}\n${messages.slice(-3000)}` };
}
