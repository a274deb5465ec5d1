import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import { Call } from '../db/entities/index.js';
import { answerIncomingPhoneCall } from '../lib/calls/incoming-calls.js';
import { detectsAnsweringMachines } from '../lib/calls/start-call-workflow.js';
import { isE164 } from '../lib/e164.js';
import { looksLikeStreamToken, streamTokenOpens } from '../lib/media/stream-token.js';
import { sameSecret } from '../lib/same-secret.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { fillVariables } from '../lib/voice-runtime/dynamic-variables.js';
import { sendBounded } from './bounded-send.js';
import type { CallAudio } from './call-audio.js';
import type { TransferLeg } from './call-sessions.js';
import { ClientJoin } from './client-join.js';
import type { GatewayContext } from './gateway-context.js';
import { openCallAudio } from './open-call-audio.js';
import { openingToPrepare, PreparedSpeech } from './prepared-speech.js';
import { watchLiveness } from './stream-liveness.js';
import { type GatewayMessage, isPhoneAudio, readClientMessage, type StreamStart } from './stream-messages.js';

// One Media Streams socket (../spec/voice-media-v1.md section 3, telephony spec section 3). The
// client proves it may connect with a token (the `?token=` query parameter or the `token` custom
// parameter of `start`): without the right one the socket closes 1008 and nothing is recorded. A
// `start` with `to`/`from` is a phone call coming in, opened by MEDIA_STREAMS_TOKEN and taken
// exactly like `simulate inbound` (a number without a published agent closes the socket 1000, no
// Call); a `start` with `callId` attaches to a call the service placed (the far end it dialled
// answered with a stream: the speaking simulator, the SIP side, the test panel's Talk), opened only
// by that call's own stream token (lib/media/stream-token.ts): the shared token attaches to no
// existing call. Then the call's audio (call-audio.ts) takes the stream.

/** A client that has not sent a valid `start` by then is closed. */
const START_WITHIN_MS = 10_000;
/** A placed call a stream may attach to: pinned to this gateway, not over. */
const LIVE_STATUSES: readonly string[] = ['queued', 'ringing', 'in_progress'];
/** Agent voice when the agent names none. */
const DEFAULT_VOICE = 'alloy';

export const CLOSE_NORMAL = 1000;
export const CLOSE_UNSUPPORTED = 1003;
export const CLOSE_POLICY = 1008;
export const CLOSE_TRY_AGAIN = 1013;

export function tokenMatches(given: string | null | undefined, token: string): boolean {
  return Boolean(given) && sameSecret(given!, token);
}

export function serveStream(socket: WebSocket, request: IncomingMessage, gateway: GatewayContext): void {
  const { logger } = gateway;
  const queryToken = new URL(request.url ?? '/', 'http://gateway').searchParams.get('token');
  // A token in the URL is checked at once: the shared one, or the shape of a call's own (which
  // call it opens is known only from `start`).
  if (
    queryToken !== null &&
    !tokenMatches(queryToken, gateway.streamsToken) &&
    !looksLikeStreamToken(queryToken)
  ) {
    socket.close(CLOSE_POLICY, 'invalid token');
    return;
  }
  let call: CallAudio | null = null;
  let starting = false;
  let stopped = false;
  let streamSid = '';
  const noStart = setTimeout(() => socket.close(CLOSE_POLICY, 'no start'), START_WITHIN_MS);
  // Pings from the start; media expected once the call is taken (stream-liveness.ts).
  const liveness = watchLiveness(socket, {
    idleTimeoutMs: gateway.settings.media.idleTimeoutMs,
    onIdle: () => {
      logger.info('no media from the stream: the caller is gone', { callId: call?.callId });
      stopped = true;
      void call?.callerHungUp();
      socket.close(CLOSE_NORMAL, 'no media');
    },
  });

  const send = (message: GatewayMessage) => {
    const open = socket.readyState === socket.OPEN;
    if (!sendBounded(socket, JSON.stringify({ ...message, streamSid })) && open) {
      logger.warn('media client does not read its audio; closed', { callId: call?.callId });
    }
  };

  let keysAsEvents = false;
  let reportsTransfers = false;
  let clientJoin: ClientJoin | null = null;
  const begin = async (start: StreamStart) => {
    const parameters = start.start.customParameters;
    const token = queryToken ?? parameters.token ?? '';
    const opens =
      parameters.callId !== undefined
        ? streamTokenOpens(gateway.controlToken, token, parameters.callId)
        : tokenMatches(token, gateway.streamsToken);
    if (!opens) {
      socket.close(CLOSE_POLICY, 'invalid token');
      return;
    }
    if (!isPhoneAudio(start.start.mediaFormat)) {
      socket.close(CLOSE_UNSUPPORTED, 'mediaFormat must be audio/x-mulaw, 8000 Hz, 1 channel');
      return;
    }
    streamSid = start.streamSid;
    // The SIP side plays the agent's keys itself, as RFC 4733 events; other clients hear tones.
    keysAsEvents = parameters.keypad === 'rfc4733';
    // The SIP side tries a transfer's target itself and reports the outcome; others are handed over.
    reportsTransfers = parameters.transfer === 'report';
    // The SIP side joins a warm transfer's two legs itself when both are its own (client-join.ts).
    clientJoin = parameters.join ? new ClientJoin(parameters.join, send) : null;
    if (parameters.callId !== undefined) {
      await attach(parameters.callId);
      return;
    }
    const to = parameters.to ?? '';
    const from = parameters.from ?? '';
    if (!isE164(to) || (from !== '' && !isE164(from))) {
      socket.close(CLOSE_NORMAL, 'unknown_number');
      return;
    }
    const em = gateway.orm.em.fork();
    // The opening is the agent's first message: its synthesis begins while the call is stored and
    // its workflow started (prepared-speech.ts).
    let speech: PreparedSpeech | undefined;
    const answer = await answerIncomingPhoneCall(
      { em, temporal: gateway.temporal, settings: gateway.settings },
      { to, from: from || null },
      {
        mediaGateway: gateway.controlUrl,
        onAgent: (agent) => {
          speech = new PreparedSpeech(
            gateway.tts,
            agent.voiceId ?? DEFAULT_VOICE,
            agent.language ?? undefined,
          );
          if (agent.firstMessage) speech.prepare(fillVariables(agent.firstMessage, {}));
        },
      },
    );
    if (!answer.answered) {
      socket.close(CLOSE_NORMAL, answer.reason);
      return;
    }
    await takeStream(await em.findOneOrFail(Call, { id: answer.callId }), { answeredHere: true, speech });
    // Taken: a client that answers its own network only now (the SIP side's 200 OK) learns it
    // here, and which call it is (the SIP side reports a bridged transfer's length against it).
    send({ event: 'mark', mark: { name: 'attached' }, callId: answer.callId });
  };

  /**
   * The far end of a call the service placed answers with this stream (its calls worker pinned the
   * call here), or the person rung for a transfer bridged here (a leg the call expects, `expect_leg`).
   */
  const attach = async (callId: string) => {
    const em = gateway.orm.em.fork();
    const leg = gateway.sessions.leg(callId);
    const rowId = leg?.callId ?? callId;
    const row = /^[0-9a-f-]{36}$/.test(rowId) ? await em.findOne(Call, { id: rowId }) : null;
    const attachable =
      row !== null && row.mediaGateway === gateway.controlUrl && LIVE_STATUSES.includes(row.status);
    if (!attachable) {
      socket.close(CLOSE_POLICY, 'no such call to attach to');
      return;
    }
    // One stream per call, claimed before any await: a second one is closed 1008.
    const release = gateway.sessions.claim(callId);
    if (!release) {
      socket.close(CLOSE_POLICY, 'the call already has a stream');
      return;
    }
    try {
      await takeStream(row, leg ? { leg: { ...leg, legId: callId } } : {});
    } catch (error) {
      release();
      throw error;
    }
    // The far end answers only now: the agent's first words reach a stream that is there.
    send({ event: 'mark', mark: { name: 'attached' }, callId });
  };

  // The call's audio begins. A call answered here starts its opening (made ahead: the agent's
  // first message, prepared-speech.ts) at once; the workflow's `connect_agent` finds it playing.
  // A transfer's leg speaks the call's language and voice; its news goes to the leg's own workflow.
  const takeStream = async (
    row: Call,
    options: { answeredHere?: boolean; speech?: PreparedSpeech; leg?: TransferLeg & { legId: string } } = {},
  ) => {
    const { leg } = options;
    const opening = leg ? null : openingToPrepare(row, gateway.voiceRuntime);
    call = await openCallAudio(gateway, {
      ...(options.speech ? { speech: options.speech } : {}),
      keysAsEvents,
      reportsTransfers,
      clientJoin,
      screensPickUp: !leg && detectsAnsweringMachines(row),
      recorded: !leg,
      callId: leg?.legId ?? row.id,
      callWorkflowId: leg?.legWorkflowId ?? callWorkflowId(row.id),
      language: row.agentSnapshot.language ?? 'en-US',
      voice: row.agentSnapshot.voiceId ?? DEFAULT_VOICE,
      opening,
      send,
      close: (code, reason) => socket.close(code, reason),
    });
    gateway.sessions.add(call);
    if (options.answeredHere && opening)
      void call.command({ type: 'connect_agent', opening: { index: 0, text: opening } }).catch(() => {});
    liveness.expectMedia();
    logger.info('media stream started', {
      callId: call.callId,
      streamSid,
      ...(leg ? { legOf: row.id } : {}),
    });
    // The person hung up while the call was being taken.
    if (stopped) await call.callerHungUp();
  };

  socket.on('message', (data, isBinary) => {
    if (isBinary) return;
    const message = readClientMessage(data.toString());
    if (!message) return; // malformed or unknown: ignored
    if (message.event === 'start') {
      if (starting) return;
      starting = true;
      clearTimeout(noStart);
      begin(message).catch((error: unknown) => {
        logger.error('media stream not started', { error: `${error}` });
        socket.close(CLOSE_TRY_AGAIN, 'try again later');
      });
      return;
    }
    if (message.event === 'stop') {
      stopped = true;
      void call?.callerHungUp();
      return;
    }
    if (stopped || !call) return; // audio before the call is taken, or after `stop`
    if (message.event === 'media' && message.track === 'inbound') {
      liveness.heard();
      call.hear(message.payload);
    } else if (message.event === 'mark') call.markEchoed(message.name);
    else if (message.event === 'dtmf') call.pressed(message.digit);
    else if (message.event === 'bridged') clientJoin?.answered(message.callId, message.joined);
  });
  socket.on('close', () => {
    clearTimeout(noStart);
    clientJoin?.closed();
    liveness.stop();
    stopped = true;
    void call?.callerHungUp();
  });
  socket.on('error', (error) => logger.warn('media stream error', { error: `${error}` }));
}
