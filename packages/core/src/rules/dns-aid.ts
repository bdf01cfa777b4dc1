/**
 * DNS-AID (draft-mozleywilliams-dnsop-dnsaid) and DNS-SD (RFC 6763, `_a2a._tcp`) naming and
 * SVCB parameters: the one place both the DNS source (reading records) and `dns-records`
 * (printing them for an operator's zone) take them from.
 *
 * An agent is published as an SVCB record (RFC 9460, ServiceMode) at
 * `_{name}._{protocol}._agents.{domain}`; DNS-AID's own parameters use the private-use SvcParamKey
 * range (`key65400`…; the numbers of the draft's reference implementation): `cap` is where the
 * capability document (for A2A: the agent card) is, `capsha256` its SHA-256 (hex, lower case),
 * which the card cache then enforces like an AI Catalog Trust Manifest pin. A TXT record at the
 * same name is the fallback for zones that cannot serve SVCB.
 *
 * @module
 */
import { isIP } from 'node:net';

/** The label under a domain where DNS-AID records live. */
export const DNS_AID_LABEL = '_agents';

/** The DNS-AID protocol label for A2A agents. */
export const DNS_AID_A2A_PROTOCOL = 'a2a';

/** The name of the index entry pointing to a domain's agent registry: `_index._agents.{domain}`. */
const DNS_AID_INDEX = '_index';

/** DNS-SD service type of A2A agents (draft-zhao-a2a-dns-sd): `_a2a._tcp.{domain}`. */
export const DNS_SD_A2A_SERVICE = '_a2a._tcp';

/** DNS-AID's SvcParamKeys (private-use range), by name. */
export const DNS_AID_PARAM_KEYS = {
  cap: 65400,
  capsha256: 65401,
  bap: 65402,
  policy: 65403,
  realm: 65404,
  sig: 65405,
} as const;

export type DnsAidParamName = keyof typeof DNS_AID_PARAM_KEYS;

/** The RFC 9460 SvcParamKeys we read or write besides DNS-AID's. */
export const SVCB_PARAM_KEYS = { mandatory: 0, alpn: 1, 'no-default-alpn': 2, port: 3, ipv4hint: 4, ipv6hint: 6 } as const;

/** DNS resource record type numbers we query. */
export const RR_TYPES = { A: 1, PTR: 12, TXT: 16, AAAA: 28, SRV: 33, SVCB: 64 } as const;

/**
 * The owner name of an agent's DNS-AID record (no trailing dot).
 *
 * @example dnsAidName('billing', 'example.com') // '_billing._a2a._agents.example.com'
 */
export function dnsAidName(agent: string, domain: string, protocol: string = DNS_AID_A2A_PROTOCOL): string {
  return `_${agent}._${protocol}.${DNS_AID_LABEL}.${domain.replace(/\.$/, '')}`;
}

/**
 * An agent label as DNS-AID names it: lower case letters, digits and hyphens, 1–63 characters
 * (one DNS label; `_` would make `_{name}` ambiguous). Returns the problem, or undefined when valid.
 */
export function dnsAidLabelProblem(agent: string): string | undefined {
  if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(agent)) {
    return `"${agent}" is not a DNS-AID agent label (1–63 lower-case letters, digits or inner hyphens)`;
  }
  return undefined;
}

/**
 * The DNS-AID agent label for a local name (`billing_agent` → `billing-agent`): lower case, every
 * character outside `a-z0-9-` made a hyphen, no leading or trailing hyphen, at most 62
 * characters (the owner name's label is `_{label}`, and a DNS label holds 63 octets). Check the
 * result with {@link dnsAidLabelProblem} (an empty label is not one).
 */
export function dnsAidLabel(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/^-+/, '').slice(0, 62).replace(/-+$/, '');
}

/** Whether a `capsha256` value is a SHA-256 in hex (64 hex digits; compared in lower case). */
export function isCapSha256(value: string): boolean {
  return /^[0-9a-fA-F]{64}$/.test(value);
}

/**
 * A domain under which DNS-AID or DNS-SD records are looked up: a DNS name of 1–253 characters,
 * labels of letters, digits, hyphens (and `_`, as service labels use), no trailing dot needed.
 * Returns the problem, or undefined when valid.
 */
export function dnsDomainProblem(domain: unknown): string | undefined {
  if (typeof domain !== 'string' || domain === '') return `must be a domain name such as "example.com", got ${JSON.stringify(domain)}`;
  const name = domain.replace(/\.$/, '');
  if (name.length > 253 || !name.split('.').every((l) => /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$/.test(l))) {
    return `"${domain}" is not a domain name (dot-separated labels of letters, digits and inner hyphens, 253 characters at most)`;
  }
  return undefined;
}

/** The owner name of a domain's DNS-SD A2A service (`_a2a._tcp.example.com`), whose PTR records name the instances. */
export function dnsSdServiceName(domain: string): string {
  return `${DNS_SD_A2A_SERVICE}.${domain.replace(/\.$/, '')}`;
}

/** The owner name of a domain's DNS-AID index entry (`_index._agents.example.com`). */
export function dnsAidIndexName(domain: string): string {
  return `${DNS_AID_INDEX}.${DNS_AID_LABEL}.${domain.replace(/\.$/, '')}`;
}

/** A resolver's address, parsed. */
export interface DnsServer {
  readonly host: string;
  readonly port: number;
  readonly family: 4 | 6;
  readonly text: string;
}

/**
 * Parses a resolver address: `127.0.0.1:5353`, `[::1]:53`, `::1`, `10.0.0.2`.
 *
 * @returns the server, or a problem sentence.
 */
export function parseDnsServer(text: unknown): DnsServer | { problem: string } {
  if (typeof text !== 'string' || text === '') return { problem: `must be an IP address with an optional port ("127.0.0.1:53", "[::1]:53"), got ${JSON.stringify(text)}` };
  let host = text;
  let port = 53;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracket) {
    host = bracket[1]!;
    if (bracket[2] !== undefined) port = Number(bracket[2]);
  } else if (isIP(text) === 0) {
    const i = text.lastIndexOf(':');
    if (i > 0) {
      host = text.slice(0, i);
      port = /^\d+$/.test(text.slice(i + 1)) ? Number(text.slice(i + 1)) : NaN;
    }
  }
  const family = isIP(host);
  if (family === 0) return { problem: `${JSON.stringify(text)} is not an IP address with an optional port ("127.0.0.1:53", "[::1]:53"); resolvers are given by address` };
  if (!Number.isInteger(port) || port < 1 || port > 65535) return { problem: `${JSON.stringify(text)} has no valid port (1–65535)` };
  return { host, port, family: family as 4 | 6, text: family === 6 ? `[${host}]:${port}` : `${host}:${port}` };
}

/** Default TTL of the printed records: one hour, as DNS-AID's reference implementation publishes. */
export const DNS_AID_DEFAULT_TTL_SECONDS = 3600;
