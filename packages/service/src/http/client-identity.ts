/**
 * Who a client is, for fair shares and fair pools (docs/security.md, "Fair pools"): what the
 * operator says it is, never what the caller claims.
 *
 * 1. A person with a verified token: that person (issuer and subject), whatever their address.
 * 2. The holder of the service's admin token: the token, told apart per browser by the client
 *    cookie the service set (an admin may hold several dashboards); a replica: that replica.
 * 3. Otherwise the remote address, widened to a network (`server.clients.ipv4Prefix`, default /32;
 *    `ipv6Prefix`, default /64, since one host commonly holds a whole /64): an anonymous caller
 *    can mint cookies, not networks. `X-Forwarded-For` is read only when the connection comes from
 *    a proxy the operator named (`server.clients.trustedProxies`): the client is the rightmost
 *    address in it that is not itself a trusted proxy.
 */
import { createHash } from 'node:crypto';
import ipaddr from 'ipaddr.js';

/** `server.clients`: how an anonymous caller's address becomes a client. */
export interface ClientIdentityOptions {
  /** Leading bits of an IPv4 address that make one client. Default 32. */
  readonly ipv4Prefix: number;
  /** Leading bits of an IPv6 address that make one client. Default 64. */
  readonly ipv6Prefix: number;
  /** Proxies (addresses or CIDR ranges) whose `X-Forwarded-For` is believed. Default none. */
  readonly trustedProxies: readonly string[];
}

/** The defaults (the configuration schema's). */
const DEFAULT_CLIENT_IDENTITY: ClientIdentityOptions = Object.freeze({ ipv4Prefix: 32, ipv6Prefix: 64, trustedProxies: Object.freeze([]) });

/** What a request says about its caller, as the request guard established it. */
export type ClientFacts =
  | { readonly kind: 'person'; readonly issuer: string; readonly sub: string }
  | { readonly kind: 'admin-token'; readonly clientId?: string }
  | { readonly kind: 'replica'; readonly id: string }
  | { readonly kind: 'anonymous'; readonly remoteAddress: string | undefined; readonly forwardedFor: string | undefined };

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Builds the rule; throws on a malformed proxy range (the configuration checks them first). */
export function clientIdentity(options: Partial<ClientIdentityOptions> = {}): (facts: ClientFacts) => string {
  const o = { ...DEFAULT_CLIENT_IDENTITY, ...options };
  const proxies: Range[] = o.trustedProxies.map((raw) => {
    if (raw.includes('/')) return ipaddr.parseCIDR(raw);
    // A bare address is its own range (/32, /128), compared as the remote address is: unmapped.
    const addr = unmapped(ipaddr.parse(raw));
    return [addr, addr.kind() === 'ipv4' ? 32 : 128];
  });
  const trusted = (addr: ipaddr.IPv4 | ipaddr.IPv6): boolean => proxies.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));

  return (facts) => {
    switch (facts.kind) {
      case 'person':
        return `person:${hash(`${facts.issuer}\n${facts.sub}`)}`;
      case 'admin-token':
        return facts.clientId !== undefined ? `token:${hash(facts.clientId)}` : 'token';
      case 'replica':
        return `replica:${facts.id}`;
      case 'anonymous': {
        let addr = parse(facts.remoteAddress);
        if (addr === undefined) return 'addr:unknown';
        if (trusted(addr) && facts.forwardedFor !== undefined) {
          const hops = facts.forwardedFor.split(',').map((s) => s.trim()).filter((s) => s !== '');
          // Right to left: each hop was added by the proxy before it; the first one not ours is the client.
          for (let i = hops.length - 1; i >= 0; i--) {
            const hop = parse(hops[i]);
            if (hop === undefined) break;
            addr = hop;
            if (!trusted(hop)) break;
          }
        }
        const bits = addr.kind() === 'ipv4' ? o.ipv4Prefix : o.ipv6Prefix;
        return `addr:${network(addr, bits)}/${bits}`;
      }
    }
  };
}

function hash(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 22);
}

function parse(value: string | undefined): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (value === undefined) return undefined;
  // X-Forwarded-For may carry a port ("1.2.3.4:5678", "[::1]:80") or a zone id.
  const bare = value.replace(/^\[([^\]]+)\](:\d+)?$/, '$1').replace(/^(\d+\.\d+\.\d+\.\d+):\d+$/, '$1').replace(/%.*$/, '');
  return ipaddr.isValid(bare) ? unmapped(ipaddr.parse(bare)) : undefined;
}

function unmapped(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}

/** The first `bits` bits of `addr`, the rest zero, as text. */
function network(addr: ipaddr.IPv4 | ipaddr.IPv6, bits: number): string {
  const cidr = `${addr.toString()}/${bits}`;
  return (addr.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(cidr) : ipaddr.IPv6.networkAddressFromCIDR(cidr)).toString();
}
