import { ApplicationFailure } from '@temporalio/common';
import type { AnswerRequest, Carrier, DialRequest } from './carrier.js';
import { postControl } from './control-request.js';

// CARRIER=sip (../spec/voice-media-v1.md section 6): calls placed through a SIP trunk by the SIP
// side (sip/, a Go process on sipgo/diago that `npm start` supervises). A dial asks the SIP side's
// control API to INVITE; what the network answers (ringing, answered, busy, no answer, not
// connected) comes back as carrier callbacks through the media gateway holding the call
// (media/carrier-callbacks.ts). The call's audio is a Media Streams stream the SIP side opens to
// that gateway once the person picks up, so the agent's joining, lines, transfer and hang-up go to
// the gateway (CallRoutingCarrier) and reach the network from there: the gateway closing the
// stream is the SIP side's BYE, or its REFER for a transfer. Here remain the dial and the release,
// which CANCELs a call still ringing (the call workflow's ring timer is the authority). Calls that
// are not the trunk's (the test panel's, `simulate inbound`) keep their own far end, `others`.

/** One control request; the SIP side answers at once. */
const CONTROL_TIMEOUT_MS = 10_000;

export class SipSideError extends Error {
  override name = 'SipSideError';
}

export class SipCarrier implements Carrier {
  constructor(
    private readonly options: { controlUrl: string; token: string },
    private readonly others: Carrier,
  ) {}

  /** Idempotent per call id: the SIP side dials a call id once, a retry finds that dial. */
  async dial(request: DialRequest): Promise<undefined> {
    if (!request.mediaGateway || !request.mediaStream) {
      // A SIP call needs a gateway for its audio (MEDIA_GATEWAY_URL, set by npm start with speech).
      throw ApplicationFailure.nonRetryable(
        'CARRIER=sip places calls with audio only: MEDIA_GATEWAY_URL is not set',
        'SipNeedsMediaGateway',
      );
    }
    // The callbacks go to the gateway's control API; the answered call's stream attaches with the
    // call's own token, which opens this call and no other.
    await this.command(request.callId, 'dial', {
      to: request.to,
      from: request.from ?? '',
      ringTimeoutSeconds: request.ringTimeoutSeconds,
      gateway: request.mediaGateway,
      streamsUrl: request.mediaStream.url,
      streamToken: request.mediaStream.token,
    });
  }

  /**
   * Calls the SIP side took are answered by their stream at the gateway (CallRoutingCarrier); what
   * reaches here is a test-panel or simulated call, whose far end is the simulator's.
   */
  answer(request: AnswerRequest) {
    return this.others.answer(request);
  }

  // The agent's audio of a SIP call is the gateway's; these reach only the others' far ends (a SIP
  // call has none there, which they take as a far end already gone).
  connectAgent(request: Parameters<Carrier['connectAgent']>[0]) {
    return this.others.connectAgent(request);
  }

  say(request: Parameters<Carrier['say']>[0]) {
    return this.others.say(request);
  }

  /** The keys are the gateway's to play, as in-band tones (media/agent-voice.ts); the others' far ends hear them as a line. */
  async sendDigits(request: { callId: string; index: number; digits: string }): Promise<void> {
    await this.others.sendDigits?.(request);
  }

  /** A SIP call's transfer: the gateway sends its stream a typed `transfer` event, and the SIP side REFERs there. */
  transfer(request: { callId: string; to: string }) {
    return this.others.transfer(request);
  }

  /** CANCEL or BYE at the SIP side (a call id it never dialled is nothing there), and the others' release. */
  async release(request: { callId: string; reason: 'hang_up' | 'cancel' }): Promise<void> {
    await this.command(request.callId, 'release', { reason: request.reason });
    await this.others.release(request);
  }

  private async command(callId: string, action: 'dial' | 'release', body: object): Promise<void> {
    const answer = await postControl(
      new URL(`/calls/${encodeURIComponent(callId)}/${action}`, this.options.controlUrl),
      { token: this.options.token, body, timeoutMs: CONTROL_TIMEOUT_MS },
      (error) =>
        new SipSideError(`SIP side ${this.options.controlUrl} not reached (${action}): ${String(error)}`),
    );
    const said = String(answer.body.error ?? '');
    if (answer.status === 409) {
      // No trunk configured: the call cannot be placed, retrying does not change that.
      throw ApplicationFailure.nonRetryable(`SIP side refused to ${action}: ${said}`, 'SipNoTrunk');
    }
    if (!answer.ok) {
      throw new SipSideError(`SIP side answered ${answer.status} to ${action}: ${said}`);
    }
  }
}
