/**
 * Origins and loopback: the one definition of a loopback host. The allowlist's development
 * exemption (`src/fetch/host-policy.ts`), the card's interface policy, the configuration's
 * bind check and the service's all ask it, so they cannot answer differently. Pure: no DNS, no
 * sockets, nothing of the library imported.
 *
 * @module
 */
import ipaddr from 'ipaddr.js';

/**
 * True for hosts that name this machine without asking DNS: `localhost`, a dotted-quad address
 * in 127.0.0.0/8, `::1` in any IPv6 spelling, and IPv4-mapped IPv6 of 127.0.0.0/8
 * (`::ffff:127.0.0.1`, `::ffff:7f00:1`: a dual-stack socket reaches 127.x through them). Square
 * brackets, letter case and one trailing dot are ignored.
 *
 * Names under `.localhost` (`foo.localhost`) are not loopback here. RFC 6761 §6.3 says resolvers
 * SHOULD answer them with loopback, but Node resolves through the system's `getaddrinfo`, which
 * often sends them to DNS like any name; and the exemption turns on plain `http:` on the strength
 * of the name alone, so a name that may reach another machine must not pass. IPv4 spellings that
 * are not four decimal parts (`127.1`, `0x7f000001`) are not loopback either: `new URL()`
 * rewrites them to dotted quads, and a bind address written that way is refused rather than
 * guessed at.
 *
 * @example isLoopbackHost('127.0.0.1') // true
 * @example isLoopbackHost('[::ffff:7f00:1]') // true
 * @example isLoopbackHost('foo.localhost') // false
 * @example isLoopbackHost('localhost.evil.test') // false
 */
export function isLoopbackHost(hostname: string): boolean {
  let host = hostname.toLowerCase();
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === 'localhost') return true;
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return ipaddr.IPv4.parse(host).range() === 'loopback';
  if (ipaddr.IPv6.isValid(host)) {
    const parsed = ipaddr.IPv6.parse(host);
    if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().range() === 'loopback';
    return parsed.range() === 'loopback';
  }
  return false;
}
