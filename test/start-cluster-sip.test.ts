import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import wavefile from 'wavefile';
import { type Orm, openOrm } from '../db/orm.js';
import { ClusterStack } from '../scripts/chaos/cluster-stack.js';
import { freePort } from '../scripts/processes.js';
import { ApiClient, createFixture, type Fixture } from './support/api.js';
import { type Baresip, onPath, startBaresip } from './support/baresip.js';
import { type AgentFixture, createAgentFixture } from './support/call-fixtures.js';
import { waitForCallEnd } from './support/call-stack.js';
import { callTo } from './support/wait-for.js';

// `npm run start:cluster` with CARRIER=sip (and VOICE_SPEECH=local, which SIP needs): the cluster
// starts the SIP side beside its media gateway, prints `SIP: udp://HOST:PORT`, takes a call from
// the phone network (baresip dialling a workspace number) through it to the number's agent, and
// starts the SIP side again when it dies. test/start.test.ts checks the same of `npm start`.

const missing = ['baresip', 'go'].filter((program) => !onPath(program));
const skip = missing.length ? `${missing.join(', ')} not installed (.ci/run installs baresip-core)` : false;

let dir: string;
let cluster: ClusterStack;
let orm: Orm;
let owner: Fixture;
let agent: AgentFixture;
let sipPort: number;
let controlUrl: string;
let mediaPort: number;
let far: Baresip | undefined;
/** The call of the first test, whose recording is in the cluster's S3 store. */
let recordedCallId: string | undefined;

const clusterLog = () => readFileSync(path.join(dir, 'cluster', 'logs', 'cluster.log'), 'utf8');

async function waitForLog(pattern: RegExp, limitMs: number): Promise<RegExpExecArray> {
  const until = Date.now() + limitMs;
  for (;;) {
    const found = pattern.exec(clusterLog());
    if (found) return found;
    if (Date.now() > until) assert.fail(`no ${pattern} in the cluster's log:\n${clusterLog().slice(-3000)}`);
    await sleep(200);
  }
}

async function healthy(url: string, limitMs = 20_000): Promise<boolean> {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    const ok = await fetch(url).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) return true;
    await sleep(200);
  }
  return false;
}

/** Anything answers on `url` (the port is served), within `limitMs`. */
async function listening(url: string, limitMs = 90_000): Promise<boolean> {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    if (
      await fetch(url).then(
        () => true,
        () => false,
      )
    )
      return true;
    await sleep(200);
  }
  return false;
}

before(async () => {
  if (skip) return;
  dir = mkdtempSync(path.join(os.tmpdir(), 'cluster-sip-'));
  // As root PostgreSQL runs as its own user, which must reach its data folder inside.
  chmodSync(dir, 0o755);
  sipPort = await freePort();
  controlUrl = `http://127.0.0.1:${await freePort()}`;
  mediaPort = await freePort();
  cluster = new ClusterStack({
    dir: path.join(dir, 'cluster'),
    simTimeScale: 0.05,
    apiProcesses: 1,
    workerProcesses: 'calls=1,webhooks=1,carrier-simulator=1',
    env: {
      VOICE_SPEECH: 'local',
      CARRIER: 'sip',
      SIP_LISTEN: `127.0.0.1:${sipPort}`,
      SIP_CONTROL_URL: controlUrl,
      RTP_PORTS: '46000-46099',
      MEDIA_PORT: String(mediaPort),
      MEDIA_CONTROL_LISTEN: `127.0.0.1:${await freePort()}`,
      // Two gateways: the first on MEDIA_PORT (the SIP side's calls come in there), the second 10 above.
      MEDIA_GATEWAYS: '2',
      // The cluster's own S3-compatible store (versitygw): the gateway uploads, the API reads there.
      RECORDINGS_STORE: 's3',
      RECORDINGS_DIR: path.join(dir, 'recordings'),
      // The parts off the call path one step down (10 by default; `npm test` runs clusters at 0
      // beside the other files, and 1 keeps this one's pace while its wiring is checked).
      CLUSTER_BACKGROUND_NICE: '1',
    },
    log: () => {},
  });
  await cluster.start();
  orm = await openOrm(cluster.databaseUrl);
  owner = await createFixture(orm, { requestsPerSecond: 1000 });
  agent = await createAgentFixture(orm, {
    workspaceId: owner.workspaceId,
    firstMessage: 'Thanks for calling Acme, this is Ada.',
  });
});

after(async () => {
  await far?.stop();
  await orm?.close();
  await cluster?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('npm run start:cluster with CARRIER=sip', { skip, timeout: 900_000 }, () => {
  test('prints its SIP address, and a call from the phone network reaches the agent of the number dialled', async () => {
    await waitForLog(new RegExp(`SIP: udp://127\\.0\\.0\\.1:${sipPort}`), 5_000);
    await waitForLog(/Media streams: ws:\/\//, 5_000);
    assert.ok(await healthy(`${controlUrl}/healthz`), 'the SIP side answers on its control address');
    // The cluster prints the gateway's address when it starts the process, which then loads its
    // models (a loaded machine takes a while): until it listens, the SIP side answers a call 503,
    // as it should, so the test waits for it as a trunk's retry would.
    assert.ok(await listening(`http://127.0.0.1:${mediaPort}/`), 'the media gateway listens');

    // baresip as the phone network: dials the workspace number (E.164 without +), plays silence.
    const silence = new wavefile.WaveFile();
    silence.fromScratch(1, 8000, '16', new Int16Array(8000 * 60));
    const play = path.join(dir, 'silence.wav');
    writeFileSync(play, silence.toBuffer());
    far = await startBaresip({ dir: path.join(dir, 'baresip'), play, answer: 'auto' });
    await far.command('dial', `sip:${agent.number.slice(1)}@127.0.0.1:${sipPort}`);
    await far.waitForEvent('CALL_ESTABLISHED', 60_000);
    const call = await callTo(orm, agent.number);
    assert.equal(call.direction, 'inbound');
    assert.equal(call.channel, 'phone');
    await sleep(3_000);
    await far.command('hangup');
    const api = new ApiClient(cluster.apiUrl.replace(/\/v1$/, ''), owner.secret);
    const ended = await waitForCallEnd(api, call.id, 60_000);
    assert.equal(ended.status, 'completed');
    assert.equal(ended.end_reason, 'caller_hangup');
    // RECORDINGS_STORE=s3: the recording is in the cluster's store once the call is completed; the
    // gateway's local copy is gone, so the API served it from the store.
    await waitForLog(/Recordings\s+S3 store http:\/\/127\.0\.0\.1:\d+, bucket recordings/, 5_000);
    assert.equal(ended.has_recording, true);
    assert.deepEqual(
      readdirSync(path.join(dir, 'recordings')).filter((name) => name.endsWith('.wav')),
      [],
    );
    recordedCallId = call.id;
    const recording = await fetch(`${cluster.apiUrl}/calls/${call.id}/recording`, {
      headers: { authorization: `Bearer ${owner.secret}` },
    });
    assert.equal(recording.status, 200);
    const wav = new wavefile.WaveFile(Buffer.from(await recording.arrayBuffer()));
    assert.equal((wav.fmt as { numChannels: number }).numChannels, 2);
  });

  test('the parts off the call path run at CLUSTER_BACKGROUND_NICE, the gateways, the SIP side and the API as the cluster does', () => {
    const own = os.getPriority();
    const priorityOf = (part: string) => {
      const pid = cluster.pidOf(part);
      assert.ok(pid, `${part} has a pid`);
      return os.getPriority(pid);
    };
    for (const part of [
      'Temporal server',
      'Temporal Web UI',
      'S3 store',
      'workers calls #1',
      'carrier simulator #1',
    ])
      assert.equal(priorityOf(part), Math.max(own, 1), part);
    for (const part of ['media gateway #1', 'media gateway #2', 'SIP side', 'API #1'])
      assert.equal(priorityOf(part), own, part);
    // PostgreSQL's server, whose backends are forked from it and so run at its priority.
    const postmaster = Number(
      readFileSync(path.join(dir, 'cluster', 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0],
    );
    assert.equal(os.getPriority(postmaster), Math.max(own, 1));
  });

  test('an S3 store that dies is started again by the cluster, on the same keys and with what it held', async () => {
    assert.ok(recordedCallId, 'the call before recorded one');
    const [, pid] = await waitForLog(/S3 store: pid (\d+)/, 5_000);
    process.kill(Number(pid), 'SIGKILL');
    await waitForLog(/S3 store exited unexpectedly \(signal SIGKILL\); starting it again/, 10_000);
    await waitForLog(new RegExp(`S3 store: started again, pid (?!${pid}\\b)\\d+`), 30_000);
    const recording = await fetch(`${cluster.apiUrl}/calls/${recordedCallId}/recording`, {
      headers: { authorization: `Bearer ${owner.secret}` },
    });
    assert.equal(recording.status, 200);
    assert.ok((await recording.arrayBuffer()).byteLength > 44);
  });

  test('the media gateways restart one at a time on SIGUSR2, each draining first: a call live on one goes on to its own end while new calls go to the other', async () => {
    const [, pid] = await waitForLog(
      /Media gateways\s+2; restart them one at a time: kill -USR2 (\d+)/,
      5_000,
    );
    const other = await createAgentFixture(orm, {
      workspaceId: owner.workspaceId,
      firstMessage: 'Acme, Ada speaking.',
    });
    const silence = path.join(dir, 'silence.wav');
    const caller = await startBaresip({
      dir: path.join(dir, 'baresip-rolling'),
      play: silence,
      answer: 'auto',
    });
    try {
      await caller.command('dial', `sip:${other.number.slice(1)}@127.0.0.1:${sipPort}`);
      await caller.waitForEvent('CALL_ESTABLISHED', 60_000);
      const call = await callTo(orm, other.number);
      // The gateways take calls in turn: which one holds this call, and which is the other.
      const controlUrls = [`http://127.0.0.1:${mediaPort + 1}`, `http://127.0.0.1:${mediaPort + 11}`];
      const holding = controlUrls.indexOf(call.mediaGateway ?? '') + 1;
      assert.ok(holding > 0, `held by one of the cluster's gateways: ${call.mediaGateway}`);
      process.kill(Number(pid), 'SIGUSR2');
      // #1 goes first; when the call is on #2, #1 is restarted and ready again before #2 drains.
      await waitForLog(new RegExp(`media gateway #${holding}: draining, then started again`), 120_000);
      // Its gateway drains: the call goes on.
      await sleep(3_000);
      const api = new ApiClient(cluster.apiUrl.replace(/\/v1$/, ''), owner.secret);
      assert.equal(
        (await api.get(`/calls/${call.id}`)).body.status,
        'in_progress',
        'the call goes on while its gateway drains',
      );
      assert.equal(caller.events.filter((event) => event.type === 'CALL_CLOSED').length, 0);
      // A call that comes in meanwhile goes to the other gateway (the SIP side's placement).
      const third = await createAgentFixture(orm, { workspaceId: owner.workspaceId, firstMessage: 'Acme.' });
      const next = await startBaresip({
        dir: path.join(dir, 'baresip-during'),
        play: silence,
        answer: 'auto',
      });
      try {
        await next.command('dial', `sip:${third.number.slice(1)}@127.0.0.1:${sipPort}`);
        await next.waitForEvent('CALL_ESTABLISHED', 60_000);
        const during = await callTo(orm, third.number);
        assert.equal(
          during.mediaGateway,
          controlUrls[2 - holding],
          'taken by the gateway that is not draining',
        );
        await next.command('hangup');
        assert.equal((await waitForCallEnd(api, during.id, 60_000)).end_reason, 'caller_hangup');
      } finally {
        await next.stop();
      }
      await caller.command('hangup');
      const ended = await waitForCallEnd(api, call.id, 60_000);
      assert.equal(ended.end_reason, 'caller_hangup', 'ended by its caller, not by the restart');
      // Then the first exits, comes back, is ready, and only then the second goes.
      await waitForLog(/media gateways: rolling restart done/, 240_000);
      const log = clusterLog();
      const order = [
        /media gateway #1: started again, pid \d+/,
        /media gateway #1: ready again/,
        /media gateway #2: draining/,
        /media gateway #2: started again, pid \d+/,
        /media gateway #2: ready again/,
      ].map((pattern) => pattern.exec(log)?.index ?? -1);
      assert.ok(
        order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!)),
        log.slice(-3000),
      );
      assert.doesNotMatch(log, /media gateway #\d exited unexpectedly/);
    } finally {
      await caller.stop();
    }
  });

  test('a SIP side that dies is started again by the cluster', async () => {
    const [, pid] = await waitForLog(/SIP side: pid (\d+)/, 5_000);
    process.kill(Number(pid), 'SIGKILL');
    await waitForLog(/SIP side exited unexpectedly \(signal SIGKILL\); starting it again/, 10_000);
    await waitForLog(new RegExp(`SIP side: started again, pid (?!${pid}\\b)\\d+`), 30_000);
    assert.ok(await healthy(`${controlUrl}/healthz`), 'the new SIP side answers');
  });
});
