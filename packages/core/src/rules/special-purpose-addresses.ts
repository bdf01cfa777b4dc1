/**
 * Deny-by-default address classification against the IANA special-purpose address registries
 * (iana-ipv4-special-registry, iana-ipv6-special-registry) plus multicast and reserved space.
 * An IPv6 address is public only inside global unicast 2000::/3 and outside every listed block;
 * an IPv4 address only outside every listed block. IPv4-mapped IPv6 (::ffff:0:0/96) is judged by
 * the IPv4 address it carries, since connecting to it reaches exactly that address.
 *
 * @module
 */
import ipaddr from 'ipaddr.js';

/** [CIDR, name]: IPv4 blocks that are never dialled. */
const IPV4: ReadonlyArray<readonly [string, string]> = [
  ['0.0.0.0/8', 'this network'],
  ['10.0.0.0/8', 'private-use'],
  ['100.64.0.0/10', 'shared address space (carrier-grade NAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private-use'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['192.31.196.0/24', 'AS112-v4'],
  ['192.52.193.0/24', 'AMT'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast'],
  ['192.168.0.0/16', 'private-use'],
  ['192.175.48.0/24', 'direct delegation AS112 service'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['255.255.255.255/32', 'limited broadcast'],
];

/** [CIDR, name]: IPv6 blocks that are never dialled (outside 2000::/3 everything is refused). */
const IPV6: ReadonlyArray<readonly [string, string]> = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible (deprecated)'],
  ['64:ff9b::/96', 'NAT64 (IPv4/IPv6 translation)'],
  ['64:ff9b:1::/48', 'local-use NAT64'],
  ['100::/64', 'discard-only'],
  ['100:0:0:1::/64', 'dummy prefix'],
  ['2001::/23', 'IETF protocol assignments'],
  ['2001::/32', 'Teredo'],
  ['2001:2::/48', 'benchmarking'],
  ['2001:10::/28', 'ORCHID (deprecated)'],
  ['2001:20::/28', 'ORCHIDv2'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['2620:4f:8000::/48', 'direct delegation AS112 service'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segment routing (SRv6) SIDs'],
  ['fc00::/7', 'unique local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
];

type Block = readonly [ipaddr.IPv4 | ipaddr.IPv6, number, string];
const parse = (list: ReadonlyArray<readonly [string, string]>): Block[] =>
  list.map(([cidr, name]) => {
    const [addr, bits] = ipaddr.parseCIDR(cidr);
    return [addr, bits, name] as const;
  });
const V4 = parse(IPV4).sort((a, b) => b[1] - a[1]);
// Most specific first, so the name is the narrowest block's (Teredo rather than IETF assignments).
const V6 = parse(IPV6).sort((a, b) => b[1] - a[1]);
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/**
 * The special-purpose block `address` falls in (its registry name), `'not an IP address'`, or
 * undefined when it is a public unicast address that may be dialled.
 *
 * @example specialPurposeBlock('::7f00:1') // 'IPv4-compatible (deprecated)'
 * @example specialPurposeBlock('8.8.8.8')  // undefined
 */
export function specialPurposeBlock(address: string): string | undefined {
  const text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(text)) return 'not an IP address';
  let addr = ipaddr.parse(text);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  const blocks = addr.kind() === 'ipv4' ? V4 : V6;
  for (const [net, bits, name] of blocks) {
    if (net.kind() === addr.kind() && addr.match(net, bits)) return name;
  }
  if (addr.kind() === 'ipv6' && !addr.match(GLOBAL_UNICAST)) return 'outside global unicast 2000::/3';
  return undefined;
}
