/**
 * Origins and loopback. The origin of a URL ({@link originOf}), an origin as configuration writes
 * it ({@link normalizeOrigin}), one trailing dot of a host name ({@link withoutTrailingDot}) and
 * the one definition of a loopback host ({@link isLoopbackHost}). The allowlist
 * (`src/fetch/host-policy.ts`), the configuration (credentials, CORS origins, signing keys), the
 * signature check, the card cache's per-origin limit, the card's interface policy and the
 * service's bind check all ask here, so they cannot answer differently. Pure: no DNS, no sockets.
 *
 * @module
 */
import ipaddr from 'ipaddr.js';
import { describe } from '../text.js';

/**
 * A host name without its one trailing dot: `a.example.` names the same host as `a.example`
 * (an absolute DNS name), so the allowlist, origins, domains and the loopback check drop it
 * before comparing. Only one: `a.example..` keeps a dot and stays invalid.
 *
 * @example withoutTrailingDot('Agents.Example.') // 'Agents.Example'
 */
export function withoutTrailingDot(host: string): string {
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/**
 * The origin of an absolute `http:` or `https:` URL, as `URL.origin` writes it (scheme and host
 * in lower case, an internationalized name in punycode, the default port left out) and with one
 * trailing dot dropped from the host, as the allowlist drops it, so a credential or a signing
 * key configured for `https://a.example.` applies to cards fetched from `https://a.example/`.
 * Undefined for anything else (not a URL, another scheme, no host). A user name or password in
 * the URL is not part of its origin; whether such a URL may be fetched is the allowlist's call.
 *
 * @example originOf('HTTPS://Agents.Example.COM:443/a/b?c') // 'https://agents.example.com'
 * @example originOf('https://bücher.example./') // 'https://xn--bcher-kva.example'
 * @example originOf('ftp://files.example.com/') // undefined
 */
export function originOf(url: string | URL): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
  const host = withoutTrailingDot(parsed.hostname);
  if (host === '') return undefined;
  if (host !== parsed.hostname) parsed.hostname = host;
  return parsed.origin;
}

/**
 * The origin of a URL the host policy normalized (`HostPolicy.normalizeEndpoint`,
 * `normalizeDocumentUrl`: its origin followed by a path that starts with `/`), read off the text
 * without parsing it again: what {@link originOf} answers for such a URL, at a fraction of the
 * cost (the card cache asks on every refresh, for its per-origin limit).
 *
 * @example originOfNormalized('https://agents.example.com:8443/billing/') // 'https://agents.example.com:8443'
 */
export function originOfNormalized(url: string): string {
  const scheme = url.indexOf('://');
  const slash = scheme === -1 ? -1 : url.indexOf('/', scheme + 3);
  return slash === -1 ? url : url.slice(0, slash);
}

/**
 * An origin as written where only an origin belongs (the configuration's `credentials[].origin`,
 * `server.allowedOrigins`, `signatures.keys[].origins`, `SignatureOptions.keys[].origins`):
 * `http(s)://host[:port]`, optionally with a `/`, and nothing else (no user name or password,
 * path, query or fragment). Returns its {@link originOf} form, or why the value is not one.
 * Surrounding whitespace is ignored.
 *
 * @example normalizeOrigin('HTTPS://Agents.Example.COM:443/') // 'https://agents.example.com'
 * @example normalizeOrigin('https://a.example.com/v1') // { problem: '"https://a.example.com/v1" is not an origin such as … (… no path, query or fragment)' }
 */
export function normalizeOrigin(raw: unknown): string | { problem: string } {
  const problem = { problem: `${describe(raw)} is not an origin such as "https://agents.example.com" (scheme, host and optional port; no path, query or fragment)` };
  if (typeof raw !== 'string') return problem;
  const text = raw.trim();
  // Checked on the text as written: `new URL()` forgets an empty query or fragment and resolves dot segments.
  if (!/^https?:\/\/[^/?#\\@]+\/?$/i.test(text)) return problem;
  return originOf(text) ?? problem;
}

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
  let host = withoutTrailingDot(hostname.toLowerCase());
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

/**
 * The transport rule for anything that carries a secret or decides trust (a token endpoint, an
 * identity provider, a JWKS, a leader replica, an allowlist entry): `https:`, or plain `http:`
 * only to a {@link isLoopbackHost loopback host} and only when `allowLoopback` (development,
 * tests) says so. Returns undefined when `url` passes, else why not, in words that name the way
 * out. The allowlist, the token fetch, the service's OIDC settings and the configuration checks
 * ask here.
 *
 * @example secureOrLoopback('https://idp.example.com/', false) // undefined
 * @example secureOrLoopback('http://127.0.0.1:8080/', true) // undefined
 * @example secureOrLoopback('http://127.0.0.1:8080/', false) // 'plain http is accepted only for a loopback host with allowLoopback (development only); use https'
 * @example secureOrLoopback('http://idp.example.com/', true) // 'plain http is accepted only for a loopback host (localhost, 127.x, [::1]); use https'
 */
export function secureOrLoopback(url: string | URL, allowLoopback: boolean): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not an absolute URL';
  }
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol !== 'http:') return `the scheme ${parsed.protocol.slice(0, -1)} is not accepted; use https`;
  if (!isLoopbackHost(parsed.hostname)) return 'plain http is accepted only for a loopback host (localhost, 127.x, [::1]); use https';
  return allowLoopback ? undefined : 'plain http is accepted only for a loopback host with allowLoopback (development only); use https';
}

/**
 * An origin over an address range, `http://10.0.0.0/8:7340` or `https://[fd00::/8]:8443`: every
 * IP-literal origin of that scheme and port inside the range. For addresses an operator names that
 * no host name covers (pods of one cluster: `replica.leaderUrls`).
 */
export interface RangeOrigin {
  readonly protocol: 'http:' | 'https:';
  readonly range: readonly [ipaddr.IPv4 | ipaddr.IPv6, number];
  readonly port: number;
}

const RANGE_ORIGIN = /^(https?):\/\/(?:\[([0-9a-fA-F:.]+\/\d{1,3})\]|(\d{1,3}(?:\.\d{1,3}){3}\/\d{1,2})):(\d{1,5})\/?$/;

/** Whether `raw` is written as a range origin at all (`scheme://<range>:<port>`); {@link parseRangeOrigin} judges it. */
export function looksLikeRangeOrigin(raw: string): boolean {
  return /^https?:\/\/(\[[^\]]*\/[^\]]*\]|[0-9.]+\/\d+)(:|\/?$)/.test(raw);
}

/** The range origin `raw` names, or why it is not one (a port is required: an address range has no default port). */
export function parseRangeOrigin(raw: string): RangeOrigin | { problem: string } {
  const m = RANGE_ORIGIN.exec(raw);
  const problem = { problem: `must be an origin over an address range such as "http://10.0.0.0/8:7340" or "https://[fd00::/8]:8443" (scheme, CIDR range, port), got ${JSON.stringify(raw.slice(0, 80))}` };
  if (m === null) return problem;
  const port = Number(m[4]);
  if (port < 1 || port > 65535) return problem;
  try {
    const range = ipaddr.parseCIDR(m[2] ?? m[3]!);
    return { protocol: `${m[1]}:` as 'http:' | 'https:', range, port };
  } catch {
    return problem;
  }
}

/** Whether `url` is an IP-literal origin inside `range` with its scheme and port. */
export function inRangeOrigin(range: RangeOrigin, url: URL): boolean {
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  if (url.protocol !== range.protocol || port !== range.port) return false;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(host)) return false;
  let addr = ipaddr.parse(host);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  const [net, bits] = range.range;
  return addr.kind() === net.kind() && addr.match(net, bits);
}
