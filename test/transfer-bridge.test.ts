import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Call } from '../db/entities/index.js';
import { CallRoutingCarrier } from '../lib/carrier/call-routing-carrier.js';
import type { Carrier, DialRequest, TransferHandOver } from '../lib/carrier/carrier.js';
import type { MediaGatewayCarrier } from '../lib/carrier/media-gateway-carrier.js';
import { createLogger } from '../lib/logger.js';
import { readMediaCommand, readMediaCommandAnswer } from '../lib/media/media-command-schema.js';
import { answerOnceEnded } from '../lib/media/media-control.js';
import { loadSettings } from '../lib/settings.js';
import { CallSessions } from '../media/call-sessions.js';
import { ClientJoin } from '../media/client-join.js';
import type { GatewayContext } from '../media/gateway-context.js';
import type { GatewayMessage } from '../media/stream-messages.js';
import { type BridgeSide, TransferBridge } from '../media/transfer-bridge.js';
import { serveTransferLeg } from '../media/transfer-legs.js';
import { mediaPathCalls } from './support/media-path.js';
import { until } from './support/wait-for.js';

// A transfer bridged in the media gateway (telephony spec sections 1 and 8), at its ports: the
// bridge itself (media/transfer-bridge.ts), the gateway's `expect_leg` and `bridge` commands on two
// calls' real media paths (media/transfer-legs.ts, on the fakes of test/support/media-path.ts), and
// how the workers' carrier routes a transfer's leg to its call's gateway
// (lib/carrier/call-routing-carrier.ts). The whole path, with the speaking simulator as the person
// rung, is in test/speaking-simulator.test.ts.

const DESK = '+4722990000';
const frame = (byte: number) => new Uint8Array(160).fill(byte);

/** A bridge side that keeps what it was played, why it was hung up, and whether it was told the bridge is over. */
function side(): BridgeSide & { played: number[]; hungUp: string[]; overs: number } {
  const kept = {
    played: [] as number[],
    hungUp: [] as string[],
    overs: 0,
    play: (payload: Uint8Array) => void kept.played.push(payload[0]),
    hangUp: (reason: string) => void kept.hungUp.push(reason),
    playedOut: async () => {},
    over: () => void kept.overs++,
    join: null,
  };
  return kept;
}

describe('the bridge', () => {
  test('each side hears the other, frame by frame; the caller hanging up hangs up the person, and its length is told once', async () => {
    const [caller, target] = [side(), side()];
    const clock = { now: 1_000 };
    const ended: [number, string][] = [];
    const bridge = new TransferBridge(caller, target, {
      maxMs: 60_000,
      now: () => clock.now,
      ended: (seconds, why) => void ended.push([seconds, why]),
    });
    bridge.callerEnd.heard(frame(1));
    bridge.targetEnd.heard(frame(2));
    bridge.callerEnd.heard(frame(3));
    assert.deepEqual(target.played, [1, 3]);
    assert.deepEqual(caller.played, [2]);
    clock.now += 42_500;
    bridge.callerEnd.gone();
    await bridge.done;
    assert.deepEqual(target.hungUp, ['the other side hung up']);
    assert.deepEqual(caller.hungUp, [], 'the caller is gone already');
    assert.deepEqual(ended, [[42.5, 'caller_hung_up']]);
    assert.deepEqual([caller.overs, target.overs], [1, 1], 'both sides’ audio is over');
    // Over: nothing more crosses, and a second hang-up tells nothing.
    bridge.targetEnd.heard(frame(4));
    bridge.targetEnd.gone();
    assert.deepEqual(caller.played, [2]);
    assert.equal(ended.length, 1);
  });

  test('the person hanging up hangs up the caller', async () => {
    const [caller, target] = [side(), side()];
    const ended: string[] = [];
    const bridge = new TransferBridge(caller, target, {
      maxMs: 60_000,
      ended: (_s, why) => void ended.push(why),
    });
    bridge.targetEnd.gone();
    await bridge.done;
    assert.deepEqual(caller.hungUp, ['the other side hung up']);
    assert.deepEqual(target.hungUp, []);
    assert.deepEqual(ended, ['target_hung_up']);
  });

  test('TRANSFER_MAX_MINUTES ends both sides', async () => {
    const [caller, target] = [side(), side()];
    const ended: string[] = [];
    const bridge = new TransferBridge(caller, target, {
      maxMs: 30,
      ended: (_s, why) => void ended.push(why),
    });
    await bridge.done;
    assert.deepEqual(caller.hungUp, ['the transfer reached its time limit']);
    assert.deepEqual(target.hungUp, ['the transfer reached its time limit']);
    assert.deepEqual(ended, ['time_limit']);
  });
});

describe('the gateway’s transfer legs, on two calls’ media paths', () => {
  const paths = mediaPathCalls();
  const pathCall = (options: Parameters<typeof paths.start>[0] = {}) => paths.start(options);

  /** A caller's call and the person rung for it (a second media path) on one gateway, the leg expected. */
  async function legExpected() {
    const [caller, person] = [await pathCall(), await pathCall()];
    const sessions = new CallSessions();
    sessions.add(caller.audio);
    sessions.add(person.audio);
    const gateway = gatewayOf(sessions);
    await serveTransferLeg(gateway, caller.callId, {
      type: 'expect_leg',
      legId: person.callId,
      legWorkflowId: 'leg',
    });
    return { caller, person, sessions, gateway };
  }

  /** The gateway's context as the leg commands use it: its calls, the database, TRANSFER_MAX_MINUTES. */
  function gatewayOf(sessions: CallSessions, transferMaxMinutes = 60): GatewayContext {
    const settings = loadSettings({});
    return {
      sessions,
      orm: paths.db().orm,
      logger: createLogger('error'),
      settings: { ...settings, media: { ...settings.media, transferMaxMinutes } },
    } as unknown as GatewayContext;
  }

  test('a bridgeable transfer of a Media Streams call answers `bridge` and changes nothing; a SIP-side call still reports a cold one', async () => {
    const plain = await pathCall();
    assert.deepEqual(
      await plain.audio.command({ type: 'transfer', to: DESK, mode: 'cold', bridgeable: true }),
      {
        transfer: 'bridge',
      },
    );
    assert.equal(plain.closed, null, 'the call goes on while the person is rung');
    assert.deepEqual(plain.out.transfers, []);
    const sip = await pathCall({ reportsTransfers: true });
    assert.deepEqual(
      await sip.audio.command({ type: 'transfer', to: DESK, mode: 'warm', bridgeable: true }),
      {
        transfer: 'bridge',
      },
    );
    assert.deepEqual(
      await sip.audio.command({ type: 'transfer', to: DESK, mode: 'cold', bridgeable: true }),
      {
        transfer: 'reported',
      },
    );
  });

  test('the leg is expected, then joined: audio crosses both ways, the agent has left, and the bridge’s length is stored', async () => {
    const [caller, person] = [await pathCall(), await pathCall()];
    const sessions = new CallSessions();
    sessions.add(caller.audio);
    const gateway = gatewayOf(sessions);
    const legId = person.callId; // the leg's stream, as a second media path
    assert.deepEqual(
      await serveTransferLeg(gateway, caller.callId, {
        type: 'expect_leg',
        legId,
        legWorkflowId: 'leg-workflow',
      }),
      { status: 200, body: {} },
    );
    assert.deepEqual(sessions.leg(legId), { callId: caller.callId, legWorkflowId: 'leg-workflow' });
    // Not attached yet: nothing to join.
    assert.deepEqual(await serveTransferLeg(gateway, caller.callId, { type: 'bridge', legId }), {
      status: 200,
      body: { bridged: false },
    });
    sessions.add(person.audio);
    assert.deepEqual(await serveTransferLeg(gateway, caller.callId, { type: 'bridge', legId }), {
      status: 200,
      body: { bridged: true },
    });
    assert.equal(sessions.live, 3, 'the bridge keeps a draining gateway up too');
    const [callerFrames, personFrames] = [caller.out.frames, person.out.frames];
    caller.silence(200);
    person.silence(100);
    assert.equal(person.out.frames - personFrames, 10, 'the person hears the caller’s 10 frames');
    assert.equal(caller.out.frames - callerFrames, 5, 'the caller hears the person’s 5 frames');
    // The agent has left both: nothing is turned into turns, nothing more goes to a workflow.
    assert.deepEqual(await caller.audio.command({ type: 'say', index: 9, text: 'Still here?' }), {
      firstAudioAt: null,
    });
    // The caller is still on the line: their call's audio (and media session) lasts as long as the bridge.
    assert.equal(
      await Promise.race([caller.audio.ended.then(() => 'over'), sleep(100).then(() => 'on')]),
      'on',
    );
    const signalsBefore = caller.signals.length + person.signals.length;
    // A retried `bridge` (its answer lost) finds them joined.
    assert.deepEqual(await serveTransferLeg(gateway, caller.callId, { type: 'bridge', legId }), {
      status: 200,
      body: { bridged: true },
    });
    await person.audio.callerHungUp();
    assert.deepEqual(caller.closed, { code: 1000, reason: 'the other side hung up' });
    await Promise.all([caller.audio.ended, person.audio.ended]);
    await until(
      async () =>
        ((await paths.db().orm.em.fork().findOne(Call, { id: caller.callId }))?.transferSeconds ?? null) !==
        null,
      'the bridge’s length was not stored',
    );
    assert.equal(
      caller.signals.length + person.signals.length,
      signalsBefore,
      'no hang-up told to a workflow',
    );
    await until(() => sessions.live === 0, 'the bridge still counts as live');
  });

  test('the agent’s last words play out before the two are joined: the person is not heard over them', async () => {
    const { caller, person, gateway } = await legExpected();
    const before = caller.out.frames;
    // Eleven words: 440 ms of audio (40 ms a word), 22 frames, played in real time.
    await caller.audio.command({
      type: 'say',
      index: 3,
      text: 'One moment please, I am putting you through to them now.',
    });
    const joining = serveTransferLeg(gateway, caller.callId, { type: 'bridge', legId: person.callId });
    person.silence(100); // the person's first frames, while the agent still speaks: not relayed
    assert.deepEqual(await joining, { status: 200, body: { bridged: true } });
    assert.equal(caller.out.frames - before, 22, 'the whole line, and nothing of the person over it');
    person.silence(100);
    assert.equal(caller.out.frames - before, 27, 'then the person is heard');
  });

  test('a bridge whose caller is gone joins nothing', async () => {
    const { caller, person, gateway } = await legExpected();
    await caller.audio.callerHungUp();
    const answer = await serveTransferLeg(gateway, caller.callId, { type: 'bridge', legId: person.callId });
    assert.ok(
      answer.status === 404 || (answer.status === 200 && 'bridged' in answer.body && !answer.body.bridged),
    );
    assert.equal(person.closed, null, 'the person rung is not hung up by a bridge that did not happen');
  });

  test('a leg another call expects is not joined to this one', async () => {
    const [caller, other, person] = [await pathCall(), await pathCall(), await pathCall()];
    const sessions = new CallSessions();
    for (const call of [caller, other, person]) sessions.add(call.audio);
    const gateway = gatewayOf(sessions);
    await serveTransferLeg(gateway, other.callId, {
      type: 'expect_leg',
      legId: person.callId,
      legWorkflowId: 'leg',
    });
    assert.deepEqual(
      await serveTransferLeg(gateway, caller.callId, { type: 'bridge', legId: person.callId }),
      {
        status: 200,
        body: { bridged: false },
      },
    );
  });
});

describe('a transfer’s legs joined by the SIP side (both its own calls)', () => {
  const paths = mediaPathCalls();

  /** A caller's call and its leg whose streams came from SIP sides named `callerSide` and `legSide`, the leg expected. */
  async function joinable(callerSide: string, legSide: string) {
    const asked: GatewayMessage[] = [];
    const callerJoin = new ClientJoin(callerSide, (message) => void asked.push(message));
    const legJoin = new ClientJoin(legSide, () => assert.fail('the leg’s stream is never asked'));
    const caller = await paths.start({ reportsTransfers: true, clientJoin: callerJoin });
    const person = await paths.start({ reportsTransfers: true, clientJoin: legJoin });
    const sessions = new CallSessions();
    sessions.add(caller.audio);
    sessions.add(person.audio);
    const settings = loadSettings({});
    const gateway = {
      sessions,
      orm: paths.db().orm,
      logger: createLogger('error'),
      settings,
    } as unknown as GatewayContext;
    await serveTransferLeg(gateway, caller.callId, {
      type: 'expect_leg',
      legId: person.callId,
      legWorkflowId: 'leg',
    });
    const bridge = () => serveTransferLeg(gateway, caller.callId, { type: 'bridge', legId: person.callId });
    return { caller, person, sessions, callerJoin, asked, bridge };
  }

  test('the SIP side is asked on the caller’s stream; joined, both streams close `transferred`, no audio crosses here and no hang-up reaches a workflow', async () => {
    const { caller, person, sessions, callerJoin, asked, bridge } = await joinable('sip-a', 'sip-a');
    const joining = bridge();
    await until(() => asked.length === 1, 'the SIP side was not asked');
    assert.deepEqual(asked, [{ event: 'bridge', bridge: { callId: person.callId } }]);
    assert.equal(caller.closed, null, 'nothing closes before its answer');
    callerJoin.answered('another-leg', true);
    assert.equal(caller.closed, null, 'an answer about another leg is no answer');
    callerJoin.answered(person.callId, true);
    // At once, as the answer is read: the streams' ends that follow are the transfer's.
    assert.deepEqual(caller.closed, { code: 1000, reason: 'transferred' });
    assert.deepEqual(person.closed, { code: 1000, reason: 'transferred' });
    assert.deepEqual(await joining, { status: 200, body: { bridged: true } });
    const frames = person.out.frames;
    caller.silence(200);
    assert.equal(person.out.frames, frames, 'the caller’s audio is not relayed: the SIP side joins it');
    const signals = caller.signals.length + person.signals.length;
    await Promise.all([caller.audio.callerHungUp(), person.audio.callerHungUp()]);
    await Promise.all([caller.audio.ended, person.audio.ended]);
    assert.equal(caller.signals.length + person.signals.length, signals, 'no hang-up told to a workflow');
    // A retried `bridge` (its answer lost) finds them joined, without asking again.
    assert.deepEqual(await bridge(), { status: 200, body: { bridged: true } });
    assert.equal(asked.length, 1);
    await until(() => sessions.live === 0, 'a joined transfer still counts as live here');
  });

  test('the SIP side cannot (the leg is not its own any more): not joined, and the call goes on with the agent', async () => {
    const { caller, person, callerJoin, asked, bridge } = await joinable('sip-a', 'sip-a');
    const joining = bridge();
    await until(() => asked.length === 1, 'the SIP side was not asked');
    callerJoin.answered(person.callId, false);
    assert.deepEqual(await joining, { status: 200, body: { bridged: false } });
    assert.deepEqual([caller.closed, person.closed], [null, null]);
    const before = caller.out.frames;
    await caller.audio.command({ type: 'say', index: 4, text: 'Sorry, they are not free.' });
    await until(() => caller.out.frames > before, 'the agent was not heard again');
  });

  test('the caller’s stream closes before the answer: not joined', async () => {
    const { callerJoin, asked, bridge } = await joinable('sip-a', 'sip-a');
    const joining = bridge();
    await until(() => asked.length === 1, 'the SIP side was not asked');
    callerJoin.closed();
    assert.deepEqual(await joining, { status: 200, body: { bridged: false } });
  });

  test('legs of two SIP sides are bridged here, frame by frame, as any two streams', async () => {
    const { caller, person, asked, bridge } = await joinable('sip-a', 'sip-b');
    assert.deepEqual(await bridge(), { status: 200, body: { bridged: true } });
    assert.deepEqual(asked, [], 'no SIP side was asked');
    const frames = person.out.frames;
    caller.silence(200);
    assert.equal(
      person.out.frames - frames,
      10,
      'the person hears the caller’s 10 frames through the gateway',
    );
    await person.audio.callerHungUp();
  });
});

describe('the control API’s leg commands', () => {
  test('expect_leg and bridge are checked whole; transfer takes its mode and whether it may be bridged', () => {
    const legId = '0b7e2c1e-5f55-4f2b-9d7e-3c1a2b4d5e6f';
    assert.ok(
      'command' in readMediaCommand({ type: 'expect_leg', legId, legWorkflowId: 'call-x-consult-y' }),
    );
    assert.ok('command' in readMediaCommand({ type: 'bridge', legId }));
    assert.ok('command' in readMediaCommand({ type: 'transfer', to: DESK, mode: 'warm', bridgeable: true }));
    assert.ok('command' in readMediaCommand({ type: 'transfer', to: DESK }), 'older carriers send neither');
    for (const bad of [
      { type: 'bridge', legId: 'not-a-uuid' },
      { type: 'bridge' },
      { type: 'expect_leg', legId },
      { type: 'expect_leg', legId, legWorkflowId: '' },
      { type: 'transfer', to: DESK, mode: 'lukewarm' },
      { type: 'transfer', to: DESK, bridgeable: 'yes' },
    ]) {
      assert.ok('error' in readMediaCommand(bad), JSON.stringify(bad));
    }
    assert.deepEqual(readMediaCommandAnswer('bridge', { bridged: true }), { answer: { bridged: true } });
    assert.ok('error' in readMediaCommandAnswer('bridge', {}));
    assert.deepEqual(readMediaCommandAnswer('transfer', { transfer: 'bridge' }), {
      answer: { transfer: 'bridge' },
    });
    assert.deepEqual(answerOnceEnded({ type: 'bridge', legId }), { bridged: false });
  });
});

describe('routing a transfer’s leg (the workers’ carrier)', () => {
  const GATEWAY = 'http://127.0.0.1:8091';
  function routing(
    options: { dialGateway?: boolean; trunk?: boolean; transferAnswer?: TransferHandOver } = {},
  ) {
    const text: { calls: [string, unknown][] } = { calls: [] };
    const media: { calls: [string, string, unknown][] } = { calls: [] };
    const record =
      (method: string) =>
      async (request: unknown): Promise<undefined> =>
        void text.calls.push([method, request]);
    const textCarrier = {
      dial: record('dial'),
      connectAgent: record('connectAgent'),
      release: record('release'),
      transfer: record('transfer'),
    } as unknown as Carrier;
    const gatewayCarrier = {
      expectLeg: async (g: string, request: unknown) => void media.calls.push(['expectLeg', g, request]),
      connectAgent: async (g: string, request: unknown) =>
        void media.calls.push(['connectAgent', g, request]),
      release: async (g: string, request: unknown) => void media.calls.push(['release', g, request]),
      transfer: async (g: string, request: unknown) => {
        media.calls.push(['transfer', g, request]);
        return options.transferAnswer ?? 'bridge';
      },
      bridge: async (g: string, request: unknown) => {
        media.calls.push(['bridge', g, request]);
        return true;
      },
    } as unknown as MediaGatewayCarrier;
    const carrier = new CallRoutingCarrier(textCarrier, gatewayCarrier, {
      // The call being transferred came in through the gateway; the text call has none.
      lookUpCall: async (callId) =>
        callId === 'call-audio'
          ? { mediaGateway: GATEWAY, direction: 'inbound' }
          : callId === 'call-out'
            ? { mediaGateway: GATEWAY, direction: 'outbound' }
            : callId === 'call-text'
              ? { mediaGateway: null, direction: 'inbound' }
              : null,
      ...(options.dialGateway === false
        ? {}
        : {
            dialGateway: {
              pick: async () => GATEWAY,
              streamFor: (_g: string, callId: string) => ({
                url: 'ws://127.0.0.1:8090/media/streams',
                token: `t-${callId}`,
              }),
            },
          }),
      pinToGateway: async () => {},
      dialsThroughTrunk: options.trunk ?? false,
    });
    return { carrier, text, media };
  }
  const legDial = (legOf: string): DialRequest => ({
    callId: 'leg-1',
    callWorkflowId: 'call-x-consult-leg-1',
    to: DESK,
    from: '+4721000000',
    ringTimeoutSeconds: 30,
    legOf,
  });

  test('a leg of a call with audio is expected at that call’s gateway, then dialled with audio there', async () => {
    const { carrier, text, media } = routing();
    assert.equal(await carrier.dial(legDial('call-audio')), undefined);
    assert.deepEqual(media.calls, [
      ['expectLeg', GATEWAY, { callId: 'call-audio', legId: 'leg-1', legWorkflowId: 'call-x-consult-leg-1' }],
    ]);
    const [[method, dialled]] = text.calls;
    assert.equal(method, 'dial');
    assert.deepEqual(dialled, {
      callId: 'leg-1',
      callWorkflowId: 'call-x-consult-leg-1',
      to: DESK,
      from: '+4721000000',
      ringTimeoutSeconds: 30,
      mediaGateway: GATEWAY,
      mediaStream: { url: 'ws://127.0.0.1:8090/media/streams', token: 't-leg-1' },
    });
  });

  test('the leg’s later requests reach the gateway from any worker (they name the call), the simulator hearing them as text too', async () => {
    const { carrier, text, media } = routing();
    await carrier.connectAgent({
      callId: 'leg-7',
      opening: { index: 0, text: 'A caller for you.' },
      legOf: 'call-audio',
    });
    await carrier.release({ callId: 'leg-7', reason: 'hang_up', legOf: 'call-audio' });
    assert.deepEqual(
      media.calls.map(([method, g]) => [method, g]),
      [
        ['connectAgent', GATEWAY],
        ['release', GATEWAY],
      ],
    );
    assert.deepEqual(
      text.calls.map(([method]) => method),
      ['connectAgent', 'release'],
    );
  });

  test('a leg of a text call is text; without a gateway address for legs a transfer is never bridged', async () => {
    const { carrier, text, media } = routing();
    await carrier.dial(legDial('call-text'));
    assert.deepEqual(media.calls, []);
    assert.equal((text.calls[0][1] as DialRequest).mediaGateway, undefined);
    // The gateway then refuses it (its client does not report): not made, not handed to the text side.
    const unbridgeable = routing({ dialGateway: false, transferAnswer: 'refused' });
    assert.equal(
      await unbridgeable.carrier.transfer({ callId: 'call-audio', to: DESK, mode: 'cold' }),
      'refused',
    );
    // An outbound call's text far end (which follows its lines) is not handed a refused one either.
    assert.equal(await unbridgeable.carrier.transfer({ callId: 'call-out', to: DESK }), 'refused');
    assert.deepEqual(unbridgeable.text.calls, []);
    assert.deepEqual(unbridgeable.media.calls[0], [
      'transfer',
      GATEWAY,
      { callId: 'call-audio', to: DESK, mode: 'cold', bridgeable: false },
    ]);
  });

  test('a transfer the gateway bridges is not handed to the text far end; the bridge goes to the call’s gateway', async () => {
    const { carrier, text, media } = routing();
    assert.equal(await carrier.transfer({ callId: 'call-audio', to: DESK, mode: 'warm' }), 'bridge');
    assert.deepEqual(text.calls, []);
    assert.equal(await carrier.bridge({ callId: 'call-audio', legId: 'leg-1' }), true);
    assert.deepEqual(media.calls.at(-1), ['bridge', GATEWAY, { callId: 'call-audio', legId: 'leg-1' }]);
    assert.equal(
      await carrier.bridge({ callId: 'call-text', legId: 'leg-1' }),
      false,
      'a text call has no bridge',
    );
  });
});
