import type { AnswerRequest, CallMedia, Carrier, DialRequest, SpeechPlayed } from './carrier.js';
import type { MediaGatewayCarrier } from './media-gateway-carrier.js';

// The calls worker's carrier: a call whose audio a media gateway holds (its Call row names the
// gateway) is carried by that gateway; every other call by the text carrier (the simulator, or a
// typed test-panel call). A call's gateway never changes once set, so it is looked up once per
// call and kept (a bounded cache: calls are short).

const REMEMBERED_CALLS = 10_000;

export class CallRoutingCarrier implements Carrier {
  private readonly gateways = new Map<string, string | null>();

  constructor(
    private readonly text: Carrier,
    private readonly media: MediaGatewayCarrier,
    /** The media gateway holding the call's audio (Call.mediaGateway), or null. */
    private readonly lookUpGateway: (callId: string) => Promise<string | null>,
  ) {}

  dial(request: DialRequest): Promise<void> {
    return this.text.dial(request);
  }

  async answer(request: AnswerRequest): Promise<CallMedia | undefined> {
    const gateway = await this.gatewayOf(request.callId);
    return gateway ? this.media.answer(gateway, request) : this.text.answer(request);
  }

  async connectAgent(request: { callId: string; opening: { index: number; text: string } | null }) {
    const gateway = await this.gatewayOf(request.callId);
    return gateway ? this.media.connectAgent(gateway, request) : this.text.connectAgent(request);
  }

  async saySentence(request: { callId: string; index: number; seq: number; text: string }) {
    const gateway = await this.gatewayOf(request.callId);
    if (gateway) await this.media.saySentence(gateway, request);
    else await this.text.saySentence?.(request);
  }

  async say(request: {
    callId: string;
    index: number;
    text: string;
    hangUp?: boolean;
  }): Promise<SpeechPlayed | undefined> {
    const gateway = await this.gatewayOf(request.callId);
    return gateway ? this.media.say(gateway, request) : this.text.say(request);
  }

  async transfer(request: { callId: string; to: string }) {
    const gateway = await this.gatewayOf(request.callId);
    return gateway ? this.media.transfer(gateway, request) : this.text.transfer(request);
  }

  async release(request: { callId: string; reason: 'hang_up' | 'cancel' }) {
    const gateway = await this.gatewayOf(request.callId);
    return gateway ? this.media.release(gateway, request) : this.text.release(request);
  }

  private async gatewayOf(callId: string): Promise<string | null> {
    const known = this.gateways.get(callId);
    if (known !== undefined) return known;
    const gateway = await this.lookUpGateway(callId);
    if (this.gateways.size >= REMEMBERED_CALLS) {
      this.gateways.delete(this.gateways.keys().next().value!);
    }
    this.gateways.set(callId, gateway);
    return gateway;
  }
}
