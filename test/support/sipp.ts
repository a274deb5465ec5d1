import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { freePort } from '../../scripts/processes.js';

// Debian's sipp (package sip-tester) as a far end that does not answer: it takes one INVITE,
// rings (180), then refuses it with `status`, or (`status` 'ring') rings until the caller CANCELs
// (200 to the CANCEL, 487 to the INVITE). Its exit code says whether the scenario ran as written:
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

function scenario(status: number | 'ring'): string {
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
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<!DOCTYPE scenario SYSTEM "sipp.dtd">
<scenario name="far end ${status}">
  <recv request="INVITE"/>
${ringing}
${end}
</scenario>
`;
}

export async function startSippFarEnd(dir: string, status: number | 'ring'): Promise<SippFarEnd> {
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
