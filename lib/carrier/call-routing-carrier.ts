import type { CallDirection } from '../../db/entities/index.js';
import type { TakeTurns, TurnsHandOver } from '../media/media-control.js';
import type {
  AnswerRequest,
  CallMedia,
  Carrier,
  DialRequest,
  LegOf,
  MediaStreamAccess,
  SpeechPlayed,
} from './carrier.js';
import type { MediaGatewayCarrier } from './media-gateway-carrier.js';

// The calls worker's carrier: a call whose audio a media gateway holds (its Call row names the
// gateway) is carried by that gateway; every other call by the text carrier (the simulator, or a
// typed test-panel call). A call's gateway never changes once set, so it is looked up once per
// call and kept (a bounded cache: calls are short).
//
// With a gateway for the calls it places (MEDIA_CONTROL_URL and MEDIA_GATEWAY_URL), a dial pins
// the call to it first and the simulator's far end answers there with audio, the stream opened
// with the call's own token (docs/voice.md, "The simulator speaks"). That far end still paces its
// script on the agent's lines: for a placed call with audio, the agent's joining, lines and
// release go to the gateway (which plays them) and then, as text, to the far end.
// A simulated person calling in (`simulate inbound`, answered here) is pinned and speaks the same
// way; that call's tee is known to the worker that answered it only (a calls worker that restarts
// mid-call no longer tells that caller the agent's lines, and the call ends by its silence timeout).
//
// A transfer's leg (`legOf`: a warm transfer's consultation leg, or any transfer of a call whose
// gateway bridges it) of a call with audio is dialled with audio to that call's gateway, which
// expects it first (media/transfer-legs.ts); the leg's later requests name the call too, so any
// worker routes them there. A leg of a text call is text.

const REMEMBERED_CALLS = 10_000;

/** What routing needs of a Call row. */
export interface CallRoute {
  /** Call.mediaGateway: the gateway holding the call's audio, or null. */
  mediaGateway: string | null;
  direction: CallDirection;
}

export interface CallRoutingOptions {
  /** The call's route; null for a call not (yet) recorded. */
  lookUpCall(callId: string): Promise<CallRoute | null>;
  /**
   * Where calls placed from here carry their audio: a gateway that is not draining, by its control
   * URL (lib/media/gateway-placement.ts), and the stream a call's far end opens at that gateway
   * (its public address, with the call's own token made for `ringTimeoutSeconds`). Unset: placed
   * calls are text-only.
   */
  dialGateway?: {
    pick(): Promise<string>;
    streamFor(gateway: string, callId: string, ringTimeoutSeconds: number): MediaStreamAccess;
  };
  /** Writes Call.mediaGateway before the dial, so every later request of the call goes there. */
  pinToGateway(callId: string, gateway: string): Promise<void>;
  /** The calls placed here go out on a trunk (CARRIER=sip): their far end is a person, not the simulator. */
  dialsThroughTrunk?: boolean;
}

interface Route {
  /** The id is a Call's; a warm transfer's consultation leg has none. */
  ownCall: boolean;
  gateway: string | null;
  /** A call we placed with audio: its far end is the simulator, which hears the agent's lines as text too. */
  teeToFarEnd: boolean;
  /**
   * The far end paces its script on the agent's lines as text (the simulator's): the turns stay
   * with the call workflow, which tells it each line. Otherwise the gateway may take them.
   */
  farEndFollowsLines: boolean;
}

export class CallRoutingCarrier implements Carrier {
  private readonly routes = new Map<string, Route>();

  constructor(
    private readonly text: Carrier,
    private readonly media: MediaGatewayCarrier,
    private readonly options: CallRoutingOptions,
  ) {}

  async dial(request: DialRequest): Promise<CallMedia | undefined> {
    if (request.legOf !== undefined) return this.dialLeg({ ...request, legOf: request.legOf });
    const known = await this.routeOf(request.callId);
    // A leg without a Call of its own (a warm transfer's consultation leg of a text call) is text.
    if (!known.ownCall) return this.text.dial(request);
    const { dialGateway } = this.options;
    if (!dialGateway) return this.text.dial(request);
    // A retried dial keeps the gateway the first one pinned.
    const gateway = known.gateway ?? (await dialGateway.pick());
    if (!known.gateway) await this.options.pinToGateway(request.callId, gateway);
    this.remember(request.callId, {
      ownCall: true,
      gateway,
      teeToFarEnd: true,
      farEndFollowsLines: !this.options.dialsThroughTrunk,
    });
    await this.text.dial({
      ...request,
      mediaGateway: gateway,
      mediaStream: dialGateway.streamFor(gateway, request.callId, request.ringTimeoutSeconds),
    });
    return this.media.callMedia(gateway);
  }

  /** A transfer's leg: with audio to its call's gateway (which expects it first), else text. */
  private async dialLeg(request: DialRequest & { legOf: string }): Promise<undefined> {
    const { legOf, ...dial } = request;
    const { gateway } = await this.routeOf(request.callId, legOf);
    const { dialGateway } = this.options;
    if (!gateway || !dialGateway) {
      await this.text.dial(dial);
      return undefined;
    }
    await this.media.expectLeg(gateway, {
      callId: legOf,
      legId: request.callId,
      legWorkflowId: request.callWorkflowId,
    });
    await this.text.dial({
      ...dial,
      mediaGateway: gateway,
      mediaStream: dialGateway.streamFor(gateway, request.callId, request.ringTimeoutSeconds),
    });
    return undefined;
  }

  async answer(request: AnswerRequest): Promise<CallMedia | undefined> {
    const route = await this.routeOf(request.callId);
    if (route.gateway && !route.teeToFarEnd) return this.media.answer(route.gateway, request);
    // A simulated person calling in (`simulate inbound`) speaks too, as the far end of a placed call.
    const simulatedPhoneCall = request.channel === 'phone' && request.farEnd !== 'browser';
    const { dialGateway } = this.options;
    if (!dialGateway || (!route.gateway && !simulatedPhoneCall)) return this.text.answer(request);
    const gateway = route.gateway ?? (await dialGateway.pick());
    if (!route.gateway) await this.options.pinToGateway(request.callId, gateway);
    this.remember(request.callId, { ownCall: true, gateway, teeToFarEnd: true, farEndFollowsLines: true });
    // The caller is there already: their stream attaches at once (no ring to wait out).
    await this.text.answer({
      ...request,
      mediaGateway: gateway,
      mediaStream: dialGateway.streamFor(gateway, request.callId, 0),
    });
    return this.media.answer(gateway, request);
  }

  async connectAgent(request: { callId: string; opening: { index: number; text: string } | null } & LegOf) {
    const route = await this.routeOf(request.callId, request.legOf);
    if (route.gateway) await this.media.connectAgent(route.gateway, request);
    if (!route.gateway || route.teeToFarEnd) await this.text.connectAgent(request);
  }

  async saySentence(request: { callId: string; index: number; seq: number; text: string }) {
    const { gateway } = await this.routeOf(request.callId);
    if (gateway) await this.media.saySentence(gateway, request);
    else await this.text.saySentence?.(request);
  }

  async say(request: {
    callId: string;
    index: number;
    text: string;
    hangUp?: boolean;
  }): Promise<SpeechPlayed | undefined> {
    const route = await this.routeOf(request.callId);
    if (!route.gateway) return this.text.say(request);
    const played = await this.media.say(route.gateway, request);
    if (route.teeToFarEnd) await this.text.say(request);
    return played;
  }

  async sendDigits(request: { callId: string; index: number; digits: string }): Promise<void> {
    const route = await this.routeOf(request.callId);
    if (route.gateway) await this.media.sendDigits(route.gateway, request);
    if (!route.gateway || route.teeToFarEnd) await this.text.sendDigits?.(request);
  }

  /**
   * The gateway's answer says whether the outcome will be reported, or the gateway bridges it (when
   * a leg can be dialled with audio to it: `dialGateway`); the text far end (a tee) only follows a
   * hand-over (a bridged one keeps its far end until the bridge is over).
   */
  async transfer(request: { callId: string; to: string; mode?: 'cold' | 'warm' }) {
    const route = await this.routeOf(request.callId);
    const bridgeable = this.options.dialGateway !== undefined;
    const handOver = route.gateway
      ? await this.media.transfer(route.gateway, { ...request, bridgeable })
      : undefined;
    // Bridged here, or not made at all: the text far end (a tee) keeps the call either way.
    if (handOver === 'bridge' || handOver === 'refused') return handOver;
    const { mode: _mode, ...handedOver } = request;
    if (!route.gateway || route.teeToFarEnd) await this.text.transfer(handedOver);
    return handOver;
  }

  async bridge(request: { callId: string; legId: string }): Promise<boolean> {
    const route = await this.routeOf(request.callId);
    return route.gateway ? this.media.bridge(route.gateway, request) : false;
  }

  async release(request: { callId: string; reason: 'hang_up' | 'cancel' } & LegOf) {
    const route = await this.routeOf(request.callId, request.legOf);
    if (route.gateway) await this.media.release(route.gateway, request);
    if (!route.gateway || route.teeToFarEnd) await this.text.release(request);
  }

  async handOverTurns(request: { callId: string } & Omit<TakeTurns, 'type'>): Promise<TurnsHandOver> {
    const route = await this.routeOf(request.callId);
    if (!route.gateway || route.farEndFollowsLines) return 'never';
    return this.media.handOverTurns(route.gateway, request);
  }

  /** `legOf`: `callId` is a transfer's leg of that call, routed like its dial (`dialLeg`). */
  private async routeOf(callId: string, legOf?: string): Promise<Route> {
    const known = this.routes.get(callId);
    if (known) return known;
    if (legOf !== undefined) {
      const parent = await this.routeOf(legOf);
      const gateway = this.options.dialGateway ? parent.gateway : null;
      const leg = {
        ownCall: false,
        gateway,
        teeToFarEnd: gateway !== null,
        farEndFollowsLines: gateway !== null && !this.options.dialsThroughTrunk,
      };
      this.remember(callId, leg);
      return leg;
    }
    const call = await this.options.lookUpCall(callId);
    const gateway = call?.mediaGateway ?? null;
    const teeToFarEnd = gateway !== null && call?.direction === 'outbound';
    const route = {
      ownCall: call !== null,
      gateway,
      teeToFarEnd,
      farEndFollowsLines: teeToFarEnd && !this.options.dialsThroughTrunk,
    };
    // Final: an outbound call's dial (its first request) pins it before anything else asks.
    this.remember(callId, route);
    return route;
  }

  private remember(callId: string, route: Route): void {
    if (this.routes.size >= REMEMBERED_CALLS) this.routes.delete(this.routes.keys().next().value!);
    this.routes.set(callId, route);
  }
}
