/**
 * The allowlist: which origins discovery may fetch from, and which resolved addresses it may
 * connect to. Pure: no DNS, no sockets. The card fetcher asks it twice, once about the URL
 * (before anything is sent) and once about every address the host resolves to (at connect time).
 *
 * Rules (threats T2, T5, T6, T7, T8 of the reference):
 * - URLs are parsed with `new URL()` first and only the parsed parts are judged, so odd IPv4
 *   spellings (`2130706433`, `0x7f.1`, `127.1`), `%2e`, IDN and `\`/`#@` tricks are seen the way
 *   the connection will see them.
 * - A URL with a username or password is refused outright.
 * - A host matches an entry exactly on (scheme, ASCII lower-case host without one trailing dot,
 *   port with defaults 443/80); `*.example.com` matches on a label boundary and never the apex.
 * - `https:` only; `http:` only for loopback hosts under the explicit development exemption.
 * - Addresses are allowed only when ipaddr.js classifies them `unicast` (IPv4-mapped IPv6 is
 *   unwrapped and classified again), plus configured CIDRs and, under the exemption, loopback.
 *
 * @module
 */
import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';
import { specialPurposeBlock } from '../rules/special-purpose-addresses.js';
import { BoundedMemo, URL_MEMO_ENTRIES } from './bounded-memo.js';
import { DiscoveryError, type Problem } from '../errors.js';
import { isLoopbackHost, secureOrLoopback, withoutTrailingDot } from '../rules/origins.js';
import { isCardPath, isCardUrl } from '../rules/urls.js';
import { redactUrl } from '../rules/redaction.js';

/** Inputs of {@link HostPolicy.from}. */
export interface HostPolicyOptions {
  /**
   * Allowed origins: `'https://agents.example.com'`, `'https://agents.example.com:8443'`,
   * `'https://*.example.com'` (wildcard only as a whole leftmost label, matched on a label
   * boundary, never the bare apex unless listed). `http://` entries are accepted only for loopback
   * hosts and only when `allowLoopback` is true.
   */
  allow: readonly string[];
  /**
   * Development exemption: permits `http:` and loopback addresses (127.0.0.0/8, ::1) for loopback
   * hosts (localhost, 127.x.x.x, [::1]).
   */
  allowLoopback?: boolean;
  /**
   * Extra address ranges permitted at connect time, CIDR (`'10.0.0.0/8'`, `'fd00::/8'`), e.g. for
   * in-cluster services.
   */
  allowCidrs?: readonly string[];
}

/**
 * What the guarded connection asks of a policy: the verdict on a URL before anything is sent, and
 * on every address at lookup and at connect. {@link HostPolicy} is the one for discovery and A2A
 * calls; {@link exactOriginPolicy} admits one origin a deployment names.
 */
export type ConnectionPolicy = Pick<HostPolicy, 'check' | 'isAddressAllowed'>;

/** The answer of {@link HostPolicy.check}. */
export type HostVerdict =
  | { allowed: true; url: URL; origin: string }
  | { allowed: false; code: 'ERR_HOST_NOT_ALLOWED' | 'ERR_INSECURE_URL'; reason: string };

interface AllowEntry {
  /** `https:` or `http:` */
  protocol: string;
  /** ASCII lower-case host, no trailing dot; for a wildcard, the suffix after `*.`. */
  host: string;
  wildcard: boolean;
  /** Explicit port, defaults filled in. */
  port: number;
  /** The entry as written, for describe(). */
  text: string;
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

const DEFAULT_PORT: Record<string, number> = { 'https:': 443, 'http:': 80 };

/** Addresses whose verdict a policy keeps (bounded: a resolver answering with ever new addresses costs a parse each past it). */
const ADDRESS_MEMO_ENTRIES = 4_096;

/** Where a base URL's card lives (A2A 0.3 and 1.0), and where A2A 0.2 put it. */
export const CARD_PATH = '.well-known/agent-card.json';
export const LEGACY_CARD_PATH = '.well-known/agent.json';


/**
 * The fragment that marks an endpoint key given by an AI Catalog entry: `#card` after a card's
 * exact URL (fetched as is, path and query, even when its path does not end in `.json`), or
 * `#card=<identifier>` after a catalog's URL for a card carried inline in it.
 */
export const CATALOG_CARD_FRAGMENT = '#card';

/**
 * The endpoint key of a card carried inline (`data`) by the AI Catalog at `catalogUrl`, under the
 * entry `identifier`: `<catalog URL>#card=<identifier>` (the fragment percent-encoded where URLs
 * require it). The key is an identity on the catalog's origin (so the allowlist judges it like
 * any endpoint); it is never requested: the catalog source answers it from the catalog it read.
 *
 * @example inlineCardKey('https://a.example.com/.well-known/ai-catalog.json', 'urn:air:a.example.com:agent:finance')
 * // 'https://a.example.com/.well-known/ai-catalog.json#card=urn:air:a.example.com:agent:finance'
 */
export function inlineCardKey(catalogUrl: string, identifier: string): string {
  const url = new URL(catalogUrl);
  url.hash = `${CATALOG_CARD_FRAGMENT.slice(1)}=${identifier}`;
  return url.href;
}

/**
 * The endpoint URL of a card an AI Catalog entry gives by `url`: the URL itself when its path
 * ends in `.json` without a query (an ordinary card URL, the same identity a static entry would
 * have), otherwise the URL with `#card`, so it is fetched exactly there rather than read as a
 * base URL under which `.well-known/agent-card.json` is looked for.
 *
 * @example catalogCardUrl('https://a.example.com/agents/research') // 'https://a.example.com/agents/research#card'
 */
export function catalogCardUrl(url: string): string {
  const u = new URL(url);
  u.hash = '';
  if (isCardPath(u.pathname) && u.search === '') return u.href;
  return `${u.href}${CATALOG_CARD_FRAGMENT}`;
}

/** True when an endpoint URL names a card carried inline in a catalog ({@link inlineCardKey}). */
export function isInlineCardKey(url: string): boolean {
  return url.includes(`${CATALOG_CARD_FRAGMENT}=`);
}


/**
 * The allowlist for discovery fetches. Create it with {@link HostPolicy.from}.
 *
 * @example
 * const policy = HostPolicy.from({ allow: ['https://*.agents.example.com'] });
 * policy.check('https://billing.agents.example.com/').allowed; // true
 * policy.cardUrl('https://billing.agents.example.com/v1');
 * // 'https://billing.agents.example.com/v1/.well-known/agent-card.json'
 */
export class HostPolicy {
  // Replaced whole by `update` (a configuration reload); every holder of this object sees it at once.
  #entries: readonly AllowEntry[];
  #allowLoopback: boolean;
  /** Raw URL → normalized, for the URLs in use (bounded, so churned endpoints are forgotten). */
  #normalized = new BoundedMemo<string>(URL_MEMO_ENTRIES);
  /** Address text → {@link isAddressAllowed}'s verdict: a request to an IP literal, a lookup's answer and a socket's peer are judged on every use (three parses each). */
  #addresses = new BoundedMemo<boolean>(ADDRESS_MEMO_ENTRIES);
  #cidrs: readonly Cidr[];
  #cidrText: readonly string[];
  #generation = 0;

  private constructor(entries: AllowEntry[], allowLoopback: boolean, cidrs: Cidr[], cidrText: string[]) {
    this.#entries = Object.freeze(entries);
    this.#allowLoopback = allowLoopback;
    this.#cidrs = Object.freeze(cidrs);
    this.#cidrText = Object.freeze(cidrText);
  }

  /**
   * Validates the options and builds a policy.
   *
   * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) listing every bad entry in
   *   `problems`, each with a path such as `allow[2]` or `allowCidrs[0]`.
   * @example HostPolicy.from({ allow: ['http://localhost:8080'], allowLoopback: true })
   */
  static from(options: HostPolicyOptions): HostPolicy {
    const problems: Problem[] = [];
    const opts = (options ?? {}) as Partial<HostPolicyOptions>;
    const allowLoopback = opts.allowLoopback ?? false;
    if (typeof allowLoopback !== 'boolean') problems.push({ path: 'allowLoopback', message: 'must be true or false' });

    const entries: AllowEntry[] = [];
    if (!Array.isArray(opts.allow)) {
      problems.push({ path: 'allow', message: 'must be a list of origins such as "https://agents.example.com"' });
    } else {
      opts.allow.forEach((raw: unknown, i: number) => {
        const parsed = parseAllowEntry(raw, allowLoopback === true);
        if (typeof parsed === 'string') problems.push({ path: `allow[${i}]`, message: parsed });
        else entries.push(parsed);
      });
    }

    const cidrs: Cidr[] = [];
    const cidrText: string[] = [];
    if (opts.allowCidrs !== undefined && !Array.isArray(opts.allowCidrs)) {
      problems.push({ path: 'allowCidrs', message: 'must be a list of CIDR ranges such as "10.0.0.0/8"' });
    } else {
      (opts.allowCidrs ?? []).forEach((raw: unknown, i: number) => {
        if (typeof raw !== 'string' || !ipaddr.isValidCIDR(raw)) {
          problems.push({ path: `allowCidrs[${i}]`, message: `${JSON.stringify(raw)} is not a CIDR range such as "10.0.0.0/8" or "fd00::/8"` });
          return;
        }
        const [addr, bits] = ipaddr.parseCIDR(raw);
        cidrs.push([unwrapMapped(addr), addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? Math.max(0, bits - 96) : bits]);
        cidrText.push(raw);
      });
    }

    if (problems.length > 0) {
      const first = problems[0] as Problem;
      throw new DiscoveryError('ERR_CONFIG_INVALID', `host policy: ${problems.length} invalid setting(s); first: ${first.path}: ${first.message}`, {
        stage: 'config',
        path: first.path,
        problems,
      });
    }
    return new HostPolicy(entries, allowLoopback === true, cidrs, cidrText);
  }

  /**
   * Takes over `next`'s allowlist, loopback setting and CIDR ranges in place (a configuration
   * reload): the cache, the fetchers, the sources and the loop hold this object, so each judges
   * the next URL and address by the new rules. Connections already open stay open; discovery's
   * next cycle re-resolves its endpoints, so an endpoint no longer allowed leaves by the usual rules.
   *
   * @example policy.update(HostPolicy.from({ allow: ['https://agents.example.com'] }))
   */
  update(next: HostPolicy): void {
    if (next === this) return;
    this.#entries = next.#entries;
    this.#allowLoopback = next.#allowLoopback;
    this.#cidrs = next.#cidrs;
    this.#cidrText = next.#cidrText;
    // A URL admitted by the old rules is judged again.
    this.#normalized = new BoundedMemo<string>(URL_MEMO_ENTRIES);
    this.#addresses = new BoundedMemo<boolean>(ADDRESS_MEMO_ENTRIES);
    this.#generation++;
  }

  /** How many times {@link update} changed the rules: a holder's memo of judged URLs is good while this stays the same. */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Judges a URL. Never throws.
   *
   * Refused with `ERR_INSECURE_URL`: schemes other than https (http only for loopback hosts under
   * `allowLoopback`). Refused with `ERR_HOST_NOT_ALLOWED`: unparsable URLs, URLs with a username or
   * password, and hosts no entry matches. When allowed, `url` is a copy with one trailing dot
   * removed from the host and `origin` is its origin (default port omitted, as `URL.origin`).
   *
   * @example policy.check('https://agents.example.com@evil.test/') // { allowed: false, code: 'ERR_HOST_NOT_ALLOWED', ... }
   */
  check(url: string | URL): HostVerdict {
    let parsed: URL;
    try {
      parsed = new URL(typeof url === 'string' ? url : url.href);
    } catch {
      return refuse('ERR_HOST_NOT_ALLOWED', `not a valid absolute URL: ${JSON.stringify(String(url)).slice(0, 200)}`);
    }
    if (parsed.username !== '' || parsed.password !== '') {
      return refuse('ERR_HOST_NOT_ALLOWED', 'URLs with a username or password are refused (authority confusion)');
    }
    const protocol = parsed.protocol;
    if (protocol !== 'https:' && protocol !== 'http:') {
      return refuse('ERR_INSECURE_URL', `scheme ${protocol} is not allowed; use https:`);
    }
    const host = withoutTrailingDot(parsed.hostname);
    if (host === '' || host.includes('*') || host.startsWith('.') || host.includes('..')) {
      return refuse('ERR_HOST_NOT_ALLOWED', `host ${JSON.stringify(parsed.hostname)} is not a valid host name`);
    }
    const insecure = secureOrLoopback(parsed, this.#allowLoopback);
    if (insecure !== undefined) return refuse('ERR_INSECURE_URL', insecure);
    const port = parsed.port === '' ? (DEFAULT_PORT[protocol] as number) : Number(parsed.port);
    const match = this.#entries.some((e) => e.protocol === protocol && e.port === port && hostMatches(e, host));
    if (!match) {
      return refuse('ERR_HOST_NOT_ALLOWED', `${protocol}//${host}${parsed.port === '' ? '' : `:${parsed.port}`} is not in the allowlist`);
    }
    if (host !== parsed.hostname) parsed.hostname = host;
    return { allowed: true, url: parsed, origin: parsed.origin };
  }

  /**
   * Address check used at connect time: true when the address is in no IANA special-purpose
   * block (rules/special-purpose-addresses.ts; IPv4-mapped IPv6 is judged by its IPv4 address), when it falls inside `allowCidrs`, or
   * when it is loopback and `allowLoopback` is set. Anything that does not parse is false.
   *
   * @example policy.isAddressAllowed('169.254.169.254') // false (link-local, cloud metadata)
   */
  isAddressAllowed(address: string): boolean {
    let allowed = this.#addresses.get(address);
    if (allowed === undefined) this.#addresses.set(address, (allowed = this.#judgeAddress(address)));
    return allowed;
  }

  #judgeAddress(address: string): boolean {
    let text = address;
    if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
    if (!ipaddr.isValid(text)) return false;
    if (specialPurposeBlock(text) === undefined) return true;
    const addr = unwrapMapped(ipaddr.parse(text));
    const range = addr.range();
    if (range === 'loopback' && this.#allowLoopback) return true;
    for (const [net, bits] of this.#cidrs) {
      if (net.kind() === addr.kind() && (addr as ipaddr.IPv4).match(net as ipaddr.IPv4, bits)) return true;
    }
    return false;
  }

  /**
   * Normalized base URL for an endpoint: origin + path ending in `/`, without query, fragment or
   * credentials.
   *
   * @throws DiscoveryError `ERR_HOST_NOT_ALLOWED` (stage `resolve`) or `ERR_INSECURE_URL` (stage
   *   `policy`) when {@link check} refuses the URL.
   * @example policy.normalizeBaseUrl('https://A.example.com./v1?x#y') // 'https://a.example.com/v1/'
   */
  normalizeBaseUrl(baseUrl: string): string {
    // An admitted URL is normalized once while the rules stand (refusals are not cached; `update` forgets).
    const known = this.#normalized.get(baseUrl);
    if (known !== undefined && known.endsWith('/')) return known;
    const verdict = this.check(baseUrl);
    if (!verdict.allowed) throw verdictError(verdict, baseUrl);
    const path = verdict.url.pathname.endsWith('/') ? verdict.url.pathname : `${verdict.url.pathname}/`;
    const normalized = asGiven(baseUrl, `${verdict.origin}${path}`);
    // The memo is shared with normalizeCardUrl; it keeps a base URL only when the raw URL is not a
    // card URL, so a hit in normalizeEndpoint is always of the right kind.
    if (!isCardPath(verdict.url.pathname)) this.#remember(baseUrl, normalized);
    return normalized;
  }

  #remember(raw: string, normalized: string): void {
    this.#normalized.set(raw, normalized);
  }

  /**
   * Normalized card URL for an endpoint given by its card's own URL (a registry record or a
   * static entry's `cardUrl`): origin + path, without query, fragment or credentials. The path
   * must end in `.json` (that is how an endpoint identity tells a card URL from a base URL, see
   * {@link normalizeEndpoint}).
   *
   * @throws DiscoveryError as {@link normalizeBaseUrl}; `ERR_HOST_NOT_ALLOWED` (stage `resolve`)
   *   when the path does not end in `.json`.
   * @example policy.normalizeCardUrl('https://A.example.com/.well-known/finance/agent-card.json#x')
   * // 'https://a.example.com/.well-known/finance/agent-card.json'
   */
  normalizeCardUrl(cardUrl: string): string {
    const known = this.#normalized.get(cardUrl);
    if (known !== undefined && !known.endsWith('/')) return known;
    const verdict = this.check(cardUrl);
    if (!verdict.allowed) throw verdictError(verdict, cardUrl);
    if (!isCardPath(verdict.url.pathname)) {
      throw new DiscoveryError('ERR_HOST_NOT_ALLOWED', `a card URL must name a JSON file (a path ending in .json): ${redactUrl(cardUrl)}`, {
        url: redactUrl(cardUrl),
        stage: 'resolve',
      });
    }
    const normalized = asGiven(cardUrl, `${verdict.origin}${verdict.url.pathname}`);
    this.#remember(cardUrl, normalized);
    return normalized;
  }

  /**
   * An endpoint's identity, used as the key everywhere (resolver, cache, loop): a URL whose path
   * ends in `.json` is the card's own URL ({@link normalizeCardUrl}, fetched exactly there);
   * anything else is a base URL ({@link normalizeBaseUrl}, whose card is under `.well-known/`).
   * A card URL at a base's well-known path (`…/.well-known/agent-card.json`) is that base's
   * identity, so two sources naming one card two ways propose one endpoint.
   * Normalized base URLs always end in `/`, normalized card URLs never do.
   *
   * @throws DiscoveryError as {@link normalizeBaseUrl}.
   */
  normalizeEndpoint(url: string): string {
    const known = this.#normalized.get(url);
    if (known !== undefined && !known.endsWith(`/${CARD_PATH}`)) return known;
    if (url.includes(CATALOG_CARD_FRAGMENT)) return this.#normalizeCatalogKey(url);
    if (!isCardUrl(url)) return this.normalizeBaseUrl(url);
    const card = this.normalizeCardUrl(url);
    // The card at a base URL's well-known path is that base's endpoint: one document, one
    // identity, whether a source names the base (a static entry) or the card (an AI Catalog entry).
    return card.endsWith(`/${CARD_PATH}`) ? card.slice(0, -CARD_PATH.length) : card;
  }

  /**
   * A key an AI Catalog gave ({@link catalogCardUrl}, {@link inlineCardKey}): allowlisted like any
   * URL, path and query kept, and the `#card` fragment kept (any other fragment is dropped).
   */
  #normalizeCatalogKey(key: string): string {
    const verdict = this.check(key);
    if (!verdict.allowed) throw verdictError(verdict, key);
    const { hash } = verdict.url;
    const marked = hash === CATALOG_CARD_FRAGMENT || hash.startsWith(`${CATALOG_CARD_FRAGMENT}=`);
    if (!marked) return this.normalizeEndpoint(`${verdict.origin}${verdict.url.pathname}${verdict.url.search}`);
    const normalized = asGiven(key, `${verdict.origin}${verdict.url.pathname}${verdict.url.search}${hash}`);
    this.#remember(key, normalized);
    return normalized;
  }

  /**
   * A document's exact URL (an AI Catalog), allowlisted: origin + path + query, no fragment.
   *
   * @throws DiscoveryError as {@link normalizeBaseUrl}.
   * @example policy.normalizeDocumentUrl('https://A.example.com/catalog?team=x#top') // 'https://a.example.com/catalog?team=x'
   */
  normalizeDocumentUrl(url: string): string {
    const verdict = this.check(url);
    if (!verdict.allowed) throw verdictError(verdict, url);
    return asGiven(url, `${verdict.origin}${verdict.url.pathname}${verdict.url.search}`);
  }

  /**
   * The card URL for a base URL: `.well-known/agent-card.json` under the normalized base (same
   * origin, under the base path: the base ends in `/` and the suffix has no `..`, so plain
   * concatenation cannot escape it — threat T6). `legacyPath: true` gives `.well-known/agent.json`
   * (A2A 0.2). Cheap for a base seen before (one map lookup).
   *
   * @throws DiscoveryError as {@link normalizeBaseUrl}.
   * @example policy.cardUrl('https://a.example.com') // 'https://a.example.com/.well-known/agent-card.json'
   */
  cardUrl(baseUrl: string, options: { legacyPath?: boolean } = {}): string {
    return `${this.normalizeBaseUrl(baseUrl)}${options.legacyPath === true ? LEGACY_CARD_PATH : CARD_PATH}`;
  }

  /**
   * A human-readable summary for logs and the CLI, one line per rule.
   * @example policy.describe() // ['allow https://*.example.com (port 443; subdomains only, not example.com)', ...]
   */
  describe(): string[] {
    const lines: string[] = [];
    if (this.#entries.length === 0) lines.push('allow: nothing (every host is refused)');
    for (const e of this.#entries) {
      const scope = e.wildcard ? `subdomains of ${e.host} only, not ${e.host} itself` : 'exact host';
      lines.push(`allow ${e.text} (${e.protocol.slice(0, -1)}, port ${e.port}; ${scope})`);
    }
    lines.push(
      this.#allowLoopback
        ? 'loopback exemption: on (http: and loopback addresses allowed for localhost, 127.0.0.0/8, [::1])'
        : 'loopback exemption: off (https: only; loopback addresses refused)',
    );
    lines.push(
      `connect-time addresses: public unicast only${this.#cidrText.length > 0 ? `, plus ${this.#cidrText.join(', ')}` : ''}` +
        ' (private, loopback, link-local, CGNAT, metadata, NAT64/6to4/Teredo and reserved ranges refused)',
    );
    lines.push('credentials in URLs: refused; redirects: never followed');
    return lines;
  }
}

/**
 * A normalized URL as the very string given when it was normalized already (the same text), else
 * the new one. Endpoint keys are looked up in a map per endpoint by every layer (the cache's judged
 * keys and its store, the refresh schedule, health): a map finds its own key object by identity,
 * while an equal string of another object is compared character by character, each a read of
 * memory the lookup did not need. 100,000 keys, one lookup each: 123 ns by the same object, 484 ns
 * by an equal copy (a throwaway measurement; docs/benchmarks.md, "a steady cycle's lookups").
 */
function asGiven(given: string, normalized: string): string {
  return normalized === given ? given : normalized;
}

function refuse(code: 'ERR_HOST_NOT_ALLOWED' | 'ERR_INSECURE_URL', reason: string): HostVerdict {
  return { allowed: false, code, reason };
}

/** Turns a refusal into the error thrown by the policy's throwing helpers and the fetcher. */
export function verdictError(verdict: Extract<HostVerdict, { allowed: false }>, url: string): DiscoveryError {
  return new DiscoveryError(verdict.code, `${verdict.reason} (${redactUrl(url)})`, {
    url: redactUrl(url),
    stage: verdict.code === 'ERR_INSECURE_URL' ? 'policy' : 'resolve',
  });
}

function hostMatches(entry: AllowEntry, host: string): boolean {
  if (!entry.wildcard) return host === entry.host;
  return host.length > entry.host.length + 1 && host.endsWith(`.${entry.host}`);
}

function unwrapMapped(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) return (addr as ipaddr.IPv6).toIPv4Address();
  return addr;
}

/** Parses one allowlist entry; returns a message when it is not acceptable. */
function parseAllowEntry(raw: unknown, allowLoopback: boolean): AllowEntry | string {
  if (typeof raw !== 'string') return `must be a string origin such as "https://agents.example.com", got ${typeof raw}`;
  const text = raw.trim();
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/(\*\.)?([^/?#]*)\/?$/.exec(text);
  if (m === null) return `${JSON.stringify(raw)} is not an origin such as "https://agents.example.com" (no path, query or fragment)`;
  const scheme = (m[1] as string).toLowerCase();
  const wildcard = m[2] !== undefined;
  const authority = m[3] as string;
  if (scheme !== 'https' && scheme !== 'http') return `${JSON.stringify(raw)}: scheme must be https`;
  if (authority.includes('@')) return `${JSON.stringify(raw)}: credentials are not allowed in an origin`;
  if (/[\\%\s]/.test(authority)) return `${JSON.stringify(raw)}: write the host plainly (no "\\", "%" or spaces)`;
  if (authority.includes('*')) return `${JSON.stringify(raw)}: a wildcard is allowed only as the whole leftmost label ("https://*.example.com")`;
  let url: URL;
  try {
    url = new URL(`${scheme}://${authority}/`);
  } catch {
    return `${JSON.stringify(raw)} is not a valid origin`;
  }
  let host = withoutTrailingDot(url.hostname);
  // `new URL` already maps IDN to punycode for special schemes; domainToASCII is the same
  // UTS #46 mapping and returns '' for anything it cannot represent.
  if (!host.startsWith('[') && domainToASCII(host) === '') return `${JSON.stringify(raw)}: host is not a valid domain name`;
  host = host.startsWith('[') ? host : domainToASCII(host);
  if (host === '' || host.startsWith('.') || host.includes('..')) return `${JSON.stringify(raw)}: host is not a valid domain name`;
  const isIp = host.startsWith('[') || ipaddr.IPv4.isValidFourPartDecimal(host);
  if (wildcard && isIp) return `${JSON.stringify(raw)}: a wildcard cannot prefix an IP address`;
  if (wildcard && !host.includes('.')) return `${JSON.stringify(raw)}: a wildcard needs at least two labels after "*." (e.g. "*.example.com")`;
  if (scheme === 'http') {
    if (!isLoopbackHost(host)) return `${JSON.stringify(raw)}: http is allowed only for loopback hosts; use https`;
    if (!allowLoopback) return `${JSON.stringify(raw)}: http entries need allowLoopback: true (development only)`;
    if (wildcard) return `${JSON.stringify(raw)}: http entries cannot use wildcards`;
  }
  const protocol = `${scheme}:`;
  const port = url.port === '' ? (DEFAULT_PORT[protocol] as number) : Number(url.port);
  return { protocol, host, wildcard, port, text: `${protocol}//${wildcard ? '*.' : ''}${host}${url.port === '' ? '' : `:${url.port}`}` };
}

/**
 * A policy that admits exactly `origin` (its scheme as written: `http:` too), judging addresses
 * with `addresses`' rule. For a peer the operator's own deployment names rather than a card or a
 * source (a leader replica on the pod network): its URL is not an allowlisted agent, yet every
 * resolved and connected address is still judged, so a planted URL cannot reach the cloud
 * metadata address, a link-local or unspecified address, or any range `addresses` does not permit.
 *
 * @example exactOriginPolicy('http://10.0.3.7:7340', HostPolicy.from({ allow: [], allowCidrs: ['10.0.0.0/8'] })).check('http://10.0.3.7:7340/api/sources').allowed // true
 */
export function exactOriginPolicy(origin: string, addresses: HostPolicy): ConnectionPolicy {
  return {
    check(rawUrl: string): HostVerdict {
      let url: URL;
      try {
        url = new URL(rawUrl);
      } catch {
        return refuse('ERR_HOST_NOT_ALLOWED', 'not an absolute URL');
      }
      if (url.username !== '' || url.password !== '') return refuse('ERR_HOST_NOT_ALLOWED', 'URLs with a username or password are refused (authority confusion)');
      if (url.protocol !== 'https:' && url.protocol !== 'http:') return refuse('ERR_INSECURE_URL', `scheme ${url.protocol} is not allowed`);
      if (url.origin !== origin) return refuse('ERR_HOST_NOT_ALLOWED', `${url.origin} is not ${origin}, the only origin this connection may reach`);
      return { allowed: true, url, origin: url.origin };
    },
    isAddressAllowed: (address) => addresses.isAddressAllowed(address),
  };
}
