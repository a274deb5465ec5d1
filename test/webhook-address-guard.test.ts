import assert from 'node:assert/strict';
import { BlockList } from 'node:net';
import { describe, test } from 'node:test';
import { forbiddenAddressReason } from '../lib/webhooks/address-guard.js';

// IANA's IPv4 and IPv6 Special-Purpose Address Registries (iana-ipv4-special-registry and
// iana-ipv6-special-registry, as of 2025), plus the multicast blocks and the IPv4-translated
// range of RFC 2765 that the registries list elsewhere. `global` is the registry's "Globally
// Reachable" column: every entry that is not globally reachable must be refused whole, first
// address to last. The few global entries (anycast services) are listed so the table is the
// registry; the guard may refuse them too (none is a webhook receiver).

interface Entry {
  block: string;
  name: string;
  global: boolean;
}

const IPV4: Entry[] = [
  { block: '0.0.0.0/8', name: '"This network"', global: false },
  { block: '0.0.0.0/32', name: '"This host on this network"', global: false },
  { block: '10.0.0.0/8', name: 'Private-Use', global: false },
  { block: '100.64.0.0/10', name: 'Shared Address Space', global: false },
  { block: '127.0.0.0/8', name: 'Loopback', global: false },
  { block: '169.254.0.0/16', name: 'Link Local', global: false },
  { block: '172.16.0.0/12', name: 'Private-Use', global: false },
  { block: '192.0.0.0/24', name: 'IETF Protocol Assignments', global: false },
  { block: '192.0.0.0/29', name: 'IPv4 Service Continuity Prefix', global: false },
  { block: '192.0.0.8/32', name: 'IPv4 dummy address', global: false },
  { block: '192.0.0.9/32', name: 'Port Control Protocol Anycast', global: true },
  { block: '192.0.0.10/32', name: 'Traversal Using Relays around NAT Anycast', global: true },
  { block: '192.0.0.170/32', name: 'NAT64/DNS64 Discovery', global: false },
  { block: '192.0.0.171/32', name: 'NAT64/DNS64 Discovery', global: false },
  { block: '192.0.2.0/24', name: 'Documentation (TEST-NET-1)', global: false },
  { block: '192.31.196.0/24', name: 'AS112-v4', global: true },
  { block: '192.52.193.0/24', name: 'AMT', global: true },
  { block: '192.88.99.0/24', name: 'Deprecated (6to4 Relay Anycast)', global: false },
  { block: '192.168.0.0/16', name: 'Private-Use', global: false },
  { block: '192.175.48.0/24', name: 'Direct Delegation AS112 Service', global: true },
  { block: '198.18.0.0/15', name: 'Benchmarking', global: false },
  { block: '198.51.100.0/24', name: 'Documentation (TEST-NET-2)', global: false },
  { block: '203.0.113.0/24', name: 'Documentation (TEST-NET-3)', global: false },
  { block: '240.0.0.0/4', name: 'Reserved', global: false },
  { block: '255.255.255.255/32', name: 'Limited Broadcast', global: false },
  { block: '224.0.0.0/4', name: 'Multicast (RFC 5771)', global: false },
];

const IPV6: Entry[] = [
  { block: '::1/128', name: 'Loopback Address', global: false },
  { block: '::/128', name: 'Unspecified Address', global: false },
  { block: '::ffff:0:0/96', name: 'IPv4-mapped Address', global: false },
  { block: '::ffff:0:0:0/96', name: 'IPv4-translated Address (RFC 2765)', global: false },
  { block: '::/96', name: 'IPv4-compatible Address (deprecated, RFC 4291)', global: false },
  { block: '64:ff9b::/96', name: 'IPv4-IPv6 Translat.', global: true },
  { block: '64:ff9b:1::/48', name: 'IPv4-IPv6 Translat.', global: false },
  { block: '100::/64', name: 'Discard-Only Address Block', global: false },
  { block: '100:0:0:1::/64', name: 'Dummy IPv6 Prefix', global: false },
  { block: '2001::/23', name: 'IETF Protocol Assignments', global: false },
  { block: '2001::/32', name: 'TEREDO', global: false },
  { block: '2001:1::1/128', name: 'Port Control Protocol Anycast', global: true },
  { block: '2001:1::2/128', name: 'Traversal Using Relays around NAT Anycast', global: true },
  { block: '2001:1::3/128', name: 'DNS-SD Service Registration Protocol Anycast', global: true },
  { block: '2001:2::/48', name: 'Benchmarking', global: false },
  { block: '2001:3::/32', name: 'AMT', global: true },
  { block: '2001:4:112::/48', name: 'AS112-v6', global: true },
  { block: '2001:10::/28', name: 'Deprecated (previously ORCHID)', global: false },
  { block: '2001:20::/28', name: 'ORCHIDv2', global: true },
  { block: '2001:30::/28', name: 'Drone Remote ID Protocol Entity Tags (DETs) Prefix', global: true },
  { block: '2001:db8::/32', name: 'Documentation', global: false },
  { block: '2002::/16', name: '6to4', global: false },
  { block: '2620:4f:8000::/48', name: 'Direct Delegation AS112 Service', global: true },
  { block: '3fff::/20', name: 'Documentation', global: false },
  { block: '5f00::/16', name: 'Segment Routing (SRv6) SIDs', global: false },
  { block: 'fc00::/7', name: 'Unique-Local', global: false },
  { block: 'fe80::/10', name: 'Link-Local Unicast', global: false },
  { block: 'ff00::/8', name: 'Multicast (RFC 4291)', global: false },
];

/** The first and last address of a block, as text. */
function edges(block: string, family: 4 | 6): [string, string] {
  const [network, prefixText] = block.split('/') as [string, string];
  const prefix = Number(prefixText);
  const bits = family === 4 ? 32 : 128;
  const value = family === 4 ? ipv4ToBigInt(network) : ipv6ToBigInt(network);
  const hostMask = (1n << BigInt(bits - prefix)) - 1n;
  const first = value & ~hostMask;
  const last = first | hostMask;
  const format = family === 4 ? bigIntToIpv4 : bigIntToIpv6;
  return [format(first), format(last)];
}

function ipv4ToBigInt(text: string): bigint {
  return text.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}
function bigIntToIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 255n)).join('.');
}
function ipv6ToBigInt(text: string): bigint {
  const [head, tail = ''] = text.split('::') as [string, string?];
  const parts = (s: string) => (s ? s.split(':') : []);
  const groups = text.includes('::')
    ? [...parts(head), ...Array(8 - parts(head).length - parts(tail).length).fill('0'), ...parts(tail)]
    : parts(head);
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
}
function bigIntToIpv6(value: bigint): string {
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((value >> shift) & 0xffffn).toString(16));
  return groups.join(':');
}

describe('the webhook address guard against the IANA special-purpose registries', () => {
  for (const [family, table] of [
    [4, IPV4],
    [6, IPV6],
  ] as const) {
    for (const entry of table.filter((e) => !e.global)) {
      test(`IPv${family} ${entry.block} (${entry.name}) is refused, first address to last`, () => {
        for (const address of edges(entry.block, family)) {
          assert.ok(forbiddenAddressReason(address), `${address} (${entry.name}) was allowed`);
        }
      });
    }
  }

  test('the IPv4-translated form of loopback from the outside probe is refused', () => {
    assert.ok(forbiddenAddressReason('::ffff:0:7f00:1'));
    assert.ok(forbiddenAddressReason('[::ffff:0:7f00:1]'));
  });

  test('public addresses on both sides of the blocks stay allowed', () => {
    for (const address of [
      '1.1.1.1',
      '8.8.8.8',
      '93.184.215.14',
      '11.0.0.1',
      '172.32.0.1',
      '2606:4700:4700::1111',
    ]) {
      assert.equal(forbiddenAddressReason(address), null, address);
    }
  });

  test('the edge arithmetic is right (a check of the test itself)', () => {
    assert.deepEqual(edges('10.0.0.0/8', 4), ['10.0.0.0', '10.255.255.255']);
    assert.deepEqual(edges('fc00::/7', 6), ['fc00:0:0:0:0:0:0:0', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']);
    const list = new BlockList();
    list.addSubnet('::ffff:0:0:0', 96, 'ipv6');
    assert.ok(list.check(edges('::ffff:0:0:0/96', 6)[1], 'ipv6'));
  });
});
