import { BlockList, isIP } from 'node:net';

// The SSRF guard: addresses a webhook may never reach unless WEBHOOKS_ALLOW_PRIVATE_TARGETS is
// on. Checked on the URL at create time and on the address actually connected to at delivery
// time (sender.ts), so a name that later resolves somewhere private is still refused.
//
// The list covers every entry of IANA's IPv4 and IPv6 Special-Purpose Address Registries that is
// not globally reachable, plus multicast and the ranges that embed an IPv4 address (refused whole
// rather than decoded); test/webhook-address-guard.test.ts holds the registries as a table and
// checks each entry's first and last address against this list. The reason is for logs and tests:
// a tenant is told only that the URL is not allowed (url-rules.ts), never what a name resolved to.

const FORBIDDEN_RANGES: [network: string, prefix: number, family: 'ipv4' | 'ipv6', why: string][] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.0.2.0', 24, 'ipv4', 'documentation'],
  ['192.88.99.0', 24, 'ipv4', 'reserved'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'reserved'],
  ['198.51.100.0', 24, 'ipv4', 'documentation'],
  ['203.0.113.0', 24, 'ipv4', 'documentation'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  // Ranges that embed an IPv4 address: refused whole rather than decoded.
  ['::', 96, 'ipv6', 'IPv4-compatible'],
  ['::ffff:0:0', 96, 'ipv6', 'IPv4-mapped'],
  ['::ffff:0:0:0', 96, 'ipv6', 'IPv4-translated'],
  ['64:ff9b::', 96, 'ipv6', 'NAT64'],
  ['64:ff9b:1::', 48, 'ipv6', 'NAT64'],
  // IETF protocol assignments: Teredo, benchmarking, ORCHID, AMT and the rest; a few anycast
  // services inside it are global, none of them a webhook receiver.
  ['2001::', 23, 'ipv6', 'IETF protocol assignment'],
  ['2002::', 16, 'ipv6', '6to4'],
  ['100::', 64, 'ipv6', 'discard'],
  ['100:0:0:1::', 64, 'ipv6', 'dummy prefix'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['3fff::', 20, 'ipv6', 'documentation'],
  ['5f00::', 16, 'ipv6', 'segment routing'],
  ['fc00::', 7, 'ipv6', 'unique-local'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const ranges = FORBIDDEN_RANGES.map(([network, prefix, family, why]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, family, why };
});

/** Why an IP address is not a public one, or null when it is. Non-IP input counts as refused. */
export function forbiddenAddressReason(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const version = isIP(bare);
  if (version === 0) return 'not an IP address';
  const family = version === 4 ? 'ipv4' : 'ipv6';
  for (const range of ranges) {
    if (range.family === family && range.list.check(bare, family)) return `${range.why} address`;
  }
  return null;
}
