import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { talkGateway } from '../api/dashboard/talk-gateway.js';
import { CallRoutingCarrier } from '../lib/carrier/call-routing-carrier.js';
import type { Carrier, DialRequest } from '../lib/carrier/carrier.js';
import type { MediaGatewayCarrier } from '../lib/carrier/media-gateway-carrier.js';
import { GatewayPlacement, type MediaGatewayAddress, mediaGateways } from '../lib/media/gateway-placement.js';
import { loadSettings } from '../lib/settings.js';

// New calls go to a media gateway that is not draining (telephony spec section 5): the placement
// asks each gateway's /readyz (503 while it drains or its speech server is down) and takes the
// next ready one in turn; a call keeps the gateway it was pinned to.

const gateway = (port: number): MediaGatewayAddress => ({
  publicUrl: `http://127.0.0.1:${port}`,
  controlUrl: `http://127.0.0.1:${port + 1}`,
});
const [A, B, C] = [gateway(8090), gateway(8100), gateway(8110)];

/** A placement whose gateways' readiness the test sets, on a clock it drives. */
function placementOf(gateways: MediaGatewayAddress[], ready: Map<MediaGatewayAddress, boolean>) {
  const clock = { now: 0 };
  const asked: string[] = [];
  const placement = new GatewayPlacement(gateways, {
    now: () => clock.now,
    isReady: async (g) => {
      asked.push(g.controlUrl);
      return ready.get(g) ?? true;
    },
  });
  return { placement, clock, asked };
}

async function picks(placement: GatewayPlacement, count: number): Promise<string[]> {
  const taken: string[] = [];
  for (let i = 0; i < count; i++) taken.push((await placement.pick()).publicUrl);
  return taken;
}

describe('the placement', () => {
  test('ready gateways take new calls in turn', async () => {
    const { placement } = placementOf([A, B, C], new Map());
    assert.deepEqual(
      await picks(placement, 4),
      [A, B, C, A].map((g) => g.publicUrl),
    );
  });

  test('a draining gateway takes no new call; once ready again (after its answer aged) it takes its turn', async () => {
    const ready = new Map([[A, false]]);
    const { placement, clock } = placementOf([A, B], ready);
    assert.deepEqual(
      await picks(placement, 3),
      [B, B, B].map((g) => g.publicUrl),
    );
    ready.set(A, true);
    // Its 503 stands for a second: still B.
    assert.equal((await placement.pick()).publicUrl, B.publicUrl);
    clock.now += 1000;
    assert.deepEqual(
      await picks(placement, 2),
      [A, B].map((g) => g.publicUrl),
    );
  });

  test('a gateway’s answer is kept for a second: placing calls costs no request each', async () => {
    const { placement, clock, asked } = placementOf([A, B], new Map());
    await picks(placement, 10);
    assert.equal(asked.length, 2, 'each gateway asked once');
    clock.now += 1000;
    await placement.pick();
    assert.equal(asked.length, 4);
  });

  test('none ready (all draining or down): the next in turn all the same, as with one gateway', async () => {
    const { placement } = placementOf(
      [A, B],
      new Map([
        [A, false],
        [B, false],
      ]),
    );
    assert.deepEqual(
      await picks(placement, 2),
      [A, B].map((g) => g.publicUrl),
    );
  });

  test('one gateway is taken without asking it', async () => {
    const { placement, asked } = placementOf([A], new Map([[A, false]]));
    assert.equal((await placement.pick()).publicUrl, A.publicUrl);
    assert.deepEqual(asked, []);
  });
});

describe('over HTTP: /readyz 200 is ready; 503, no answer within 500 ms or nothing listening is not', () => {
  const servers: Server[] = [];
  const addresses: Record<'ready' | 'draining' | 'hanging', MediaGatewayAddress> = {} as never;
  before(async () => {
    for (const [name, answer] of [
      ['ready', 200],
      ['draining', 503],
      ['hanging', 0],
    ] as const) {
      const server = createServer((request, response) => {
        if (answer === 0) return; // never answers
        response.writeHead(request.url === '/readyz' ? answer : 404).end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      servers.push(server);
      addresses[name] = gateway((server.address() as AddressInfo).port);
    }
  });
  after(() => {
    for (const server of servers) server.closeAllConnections();
    for (const server of servers) server.close();
  });

  test('only the ready one is taken', async () => {
    const closed = gateway(1); // nothing listens on port 1
    const placement = new GatewayPlacement([closed, addresses.draining, addresses.hanging, addresses.ready]);
    const startedAt = performance.now();
    assert.equal((await placement.pick()).publicUrl, addresses.ready.publicUrl);
    assert.ok(performance.now() - startedAt < 2000, 'a gateway that hangs costs at most its 500 ms');
    assert.equal((await placement.pick()).publicUrl, addresses.ready.publicUrl);
  });
});

describe('settings and the places that place calls', () => {
  test('MEDIA_GATEWAY_URLS: public addresses, each one’s control API at its next port; else MEDIA_GATEWAY_URL and MEDIA_CONTROL_URL', () => {
    const many = loadSettings({ MEDIA_GATEWAY_URLS: 'http://127.0.0.1:8090, http://media2:8100/' });
    assert.deepEqual(mediaGateways(many.media), [
      { publicUrl: 'http://127.0.0.1:8090', controlUrl: 'http://127.0.0.1:8091' },
      { publicUrl: 'http://media2:8100', controlUrl: 'http://media2:8101' },
    ]);
    const one = loadSettings({
      MEDIA_GATEWAY_URL: 'http://media:8090',
      MEDIA_CONTROL_URL: 'http://media:9000',
    });
    assert.deepEqual(mediaGateways(one.media), [
      { publicUrl: 'http://media:8090', controlUrl: 'http://media:9000' },
    ]);
    assert.deepEqual(mediaGateways(loadSettings({}).media), []);
    for (const bad of ['media:8090', 'http://media', 'http://a:8090,ftp://b:1']) {
      assert.throws(() => loadSettings({ MEDIA_GATEWAY_URLS: bad }), /MEDIA_GATEWAY_URLS must be/);
    }
  });

  test('a placed call is pinned to the gateway picked, and its far end streams there; a retried dial keeps it', async () => {
    const dials: DialRequest[] = [];
    const pinned = new Map<string, string>();
    const text = { dial: async (request: DialRequest) => void dials.push(request) } as unknown as Carrier;
    const media = {
      callMedia: (g: string) => ({ taskQueue: `media-${g}` }),
    } as unknown as MediaGatewayCarrier;
    const placement = new GatewayPlacement([A, B], { isReady: async (g) => g !== A });
    const carrier = new CallRoutingCarrier(text, media, {
      lookUpCall: async (callId) => ({
        mediaGateway: pinned.get(callId) ?? null,
        direction: 'outbound',
      }),
      dialGateway: {
        pick: async () => (await placement.pick()).controlUrl,
        streamFor: (g, callId) => ({
          url: `${placement.byControlUrl(g)!.publicUrl}/media/streams`,
          token: `token-${callId}`,
        }),
      },
      pinToGateway: async (callId, g) => void pinned.set(callId, g),
    });
    const request = {
      callId: 'c1',
      callWorkflowId: 'call-c1',
      to: '+4790001234',
      from: null,
      ringTimeoutSeconds: 30,
    };
    assert.deepEqual(await carrier.dial(request), { taskQueue: `media-${B.controlUrl}` });
    assert.equal(pinned.get('c1'), B.controlUrl, 'A drains: B holds it');
    assert.equal(dials[0]?.mediaGateway, B.controlUrl);
    assert.equal(dials[0]?.mediaStream?.url, `${B.publicUrl}/media/streams`);
    // A retried dial keeps the gateway pinned, whatever the turns say now.
    await carrier.dial(request);
    assert.equal(dials[1]?.mediaGateway, B.controlUrl);
  });

  test('Talk picks a gateway for a new call and streams to the one the call is pinned to', async () => {
    const settings = loadSettings({
      MEDIA_GATEWAY_URLS: 'http://127.0.0.1:1,http://127.0.0.1:3',
      MEDIA_CONTROL_TOKEN: 'control',
    });
    const talk = talkGateway(settings);
    assert.equal(talk.available, true);
    if (!talk.available) return;
    // Nothing listens there: neither is ready, so the turns go on as with one gateway.
    assert.deepEqual([await talk.pick(), await talk.pick()], ['http://127.0.0.1:2', 'http://127.0.0.1:4']);
    assert.equal(talk.streamsUrlOf('http://127.0.0.1:4'), 'ws://127.0.0.1:3/media/streams');
    assert.equal(talkGateway(loadSettings({ MEDIA_CONTROL_TOKEN: 'control' })).available, false);
  });
});
