/**
 * DNS-AID records for an operator's zone (`a2a-discovery dns-records`): for each agent, the SVCB
 * record at `_{label}._a2a._agents.{domain}` (RFC 9460 ServiceMode, DNS-AID's `cap` = the card
 * URL and `capsha256` = the SHA-256 of the card's bytes, which a reader's card cache enforces as a
 * pin), its TXT fallback at the same name, and the domain's `_index._agents` TXT list, as
 * zone-file lines in presentation format (RFC 1035 §5.1, RFC 9460 §2.1 and Appendix A). Pure:
 * no I/O.
 *
 * @module
 */
import { isIP } from 'node:net';
import { DiscoveryError, type Problem } from '../errors.js';
import { DNS_AID_A2A_PROTOCOL, DNS_AID_DEFAULT_TTL_SECONDS, DNS_AID_PARAM_KEYS, dnsAidIndexName, dnsAidLabel, dnsAidLabelProblem, dnsAidName, dnsDomainProblem, isCapSha256 } from '../rules/dns-aid.js';

/** One agent to publish. */
export interface DnsAidPublishedAgent {
  /** Its local name; the record's label is {@link dnsAidLabel} of it (`billing_agent` → `billing-agent`). */
  readonly name: string;
  /** Where its card is: an absolute http(s) URL, published as `cap`. */
  readonly cardUrl: string;
  /** SHA-256 of the card's bytes as served at `cardUrl`, 64 hex digits: published as `capsha256`. */
  readonly cardSha256: string;
}

/** Options of {@link dnsAidZone}. */
export interface DnsAidZoneOptions {
  /** The zone the records go in, e.g. `example.com` (a trailing dot is fine). */
  readonly domain: string;
  /** The records' TTL, in seconds (0 to 2^31−1, RFC 2181 §8). Default {@link DNS_AID_DEFAULT_TTL_SECONDS}. */
  readonly ttlSeconds?: number;
  /** Also print the `_index._agents.{domain}` TXT list of the agents' labels. Default true. */
  readonly index?: boolean;
}

/** One agent's records. */
interface DnsAidZoneRecord {
  readonly name: string;
  readonly label: string;
  /** The owner name, fully qualified (trailing dot). */
  readonly owner: string;
  /** The SVCB line. */
  readonly svcb: string;
  /** The TXT fallback line, unless a value does not fit a TXT character-string (see `problems`). */
  readonly txt?: string;
}

/** What {@link dnsAidZone} returns. */
export interface DnsAidZoneResult {
  /** The agents published, in the order given. */
  readonly records: readonly DnsAidZoneRecord[];
  /** The `_index._agents` TXT line, when asked for and it fits. */
  readonly index?: string;
  /** Agents skipped and lines left out, each with its reason (`path` is the agent's name). */
  readonly problems: readonly Problem[];
  /** The zone-file lines: the index, then each agent's SVCB and TXT; a `;` comment per problem. */
  readonly lines: readonly string[];
}

/** RFC 1035 §3.3: a <character-string> holds at most 255 octets. */
const MAX_CHARACTER_STRING = 255;

/** RFC 1035 §3.1: a name's wire form (length-prefixed labels and the root's 0) holds at most 255 octets. */
const MAX_NAME_OCTETS = 255;

/** RFC 1035 §3.2.1: RDATA (here an SVCB record's) holds at most 65,535 octets. */
const MAX_RDATA_OCTETS = 65535;

/** `\DDD` for each byte of `text`'s UTF-8 (RFC 1035 §5.1). */
function decimalEscapes(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) out += `\\${String(byte).padStart(3, '0')}`;
  return out;
}

/**
 * A <character-string> (or an SvcParam value) in presentation format (RFC 1035 §5.1, RFC 9460
 * §2.1 and Appendix A): always one quoted field on one line, `"` and `\` escaped with a
 * backslash, every byte outside printable ASCII (controls, CR, LF, DEL, the bytes of non-ASCII
 * UTF-8) as `\DDD`. Inside the quotes `;`, `(`, `)`, `$` and spaces are plain characters. A
 * string is taken as its UTF-8 bytes (a lone surrogate as U+FFFD). The length limit (255 bytes
 * for a TXT character-string) is the caller's to check.
 *
 * @example zoneCharacterString('a "b"\n') // '"a \\"b\\"\\010"'
 */
export function zoneCharacterString(value: string | Uint8Array): string {
  let out = '"';
  for (const byte of typeof value === 'string' ? Buffer.from(value, 'utf8') : value) {
    if (byte === 0x22 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte < 0x20 || byte > 0x7e) out += `\\${String(byte).padStart(3, '0')}`;
    else out += String.fromCharCode(byte);
  }
  return `${out}"`;
}

/**
 * What a comment may not carry as it is: controls (C0 with CR and LF, DEL, C1), line and
 * paragraph separators, lone surrogates, bidirectional controls; and `\`, so that an escape is
 * never ambiguous.
 */
const UNSAFE_IN_COMMENT = /[\p{Cc}\p{Zl}\p{Zp}\p{Cs}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\\]/gu;

/**
 * A zone-file comment line, `; {text}`, that cannot break its line whatever `text` holds: a
 * control character (CR, LF, NUL…), a line or paragraph separator, a lone surrogate or a
 * bidirectional control is written as the `\DDD` escapes of its UTF-8 bytes and `\` as `\\`;
 * other characters (any script) stay as they are. The line starts with `;`, so it is never a
 * `$` directive and never a record.
 *
 * @example zoneComment('x\n$INCLUDE /etc/passwd') // '; x\\010$INCLUDE /etc/passwd'
 */
export function zoneComment(text: string): string {
  return `; ${text.replace(UNSAFE_IN_COMMENT, (c) => (c === '\\' ? '\\\\' : decimalEscapes(c)))}`;
}

/**
 * Why `name` (a host, an owner name; one trailing dot allowed) cannot be written in a zone file
 * as a domain name as it is, or undefined when it can: it must be dot-separated labels of ASCII
 * letters, digits, `-` and `_` (nothing a zone file would read as a delimiter, a comment, a
 * directive or an escape), each of 1–63 octets, 255 octets in all in wire form. An IDN is
 * written in its ASCII form (punycode, `xn--…`), which is what a URL's host already is.
 */
export function zoneDomainNameProblem(name: string): string | undefined {
  const bare = name.endsWith('.') ? name.slice(0, -1) : name;
  const shown = JSON.stringify(name);
  if (bare === '') return `${shown} is not a domain name (it is empty)`;
  const labels = bare.split('.');
  const bad = labels.find((l) => !/^[A-Za-z0-9_-]{1,63}$/.test(l));
  if (bad !== undefined) {
    return bad === '' ? `${shown} is not a domain name (an empty label)` : `${shown} is not a domain name that a zone file can hold (label ${JSON.stringify(bad)}: 1–63 ASCII letters, digits, "-" or "_" per label)`;
  }
  const octets = bare.length + 2;
  if (octets > MAX_NAME_OCTETS) return `${shown} is ${octets} octets as a DNS name, more than 255 (RFC 1035 §3.1)`;
  return undefined;
}

/** Where an agent's card is, as SVCB sees it: target name (or `.` with address hints), port. */
function endpointOf(cardUrl: string): { host: string; ip?: 4 | 6; port: number } | string {
  let url: URL;
  try {
    url = new URL(cardUrl);
  } catch {
    return `card URL ${JSON.stringify(cardUrl)} is not an absolute URL`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `card URL ${url.href} is not http(s)`;
  if (url.username !== '' || url.password !== '') return 'card URL carries credentials';
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  const ip = isIP(literal);
  if (ip !== 0) return { host: literal, ip: ip as 4 | 6, port };
  // A URL's host may hold `;`, `(`, `"`, `$`… (WHATWG URL forbids fewer characters than DNS
  // names allow): such a host is no target name a zone file can carry.
  const hostProblem = zoneDomainNameProblem(url.hostname);
  if (hostProblem !== undefined) return `card URL host ${hostProblem}`;
  return { host: url.hostname.replace(/\.$/, '').toLowerCase(), port };
}

/**
 * The DNS-AID records of `agents` under `options.domain`, as zone-file lines:
 *
 * ```
 * _billing-agent._a2a._agents.example.com. 3600 IN SVCB 1 billing.example.com. alpn=a2a port=443 key65400="https://billing.example.com/.well-known/agent-card.json" key65401="9f86…"
 * _billing-agent._a2a._agents.example.com. 3600 IN TXT "v=1" "target=billing.example.com" "port=443" "alpn=a2a" "cap=https://…" "capsha256=9f86…" "cap-sha256=9f86…"
 * ```
 *
 * The SVCB target is the card URL's host (an IP literal cannot be a target: then `.`, the owner
 * itself, with `ipv4hint`/`ipv6hint`), `port` the URL's (443 or 80 by default), `alpn` DNS-AID's
 * protocol label `a2a`; `cap` and `capsha256` use the draft's private-use keys (key65400,
 * key65401). The TXT fallback has one `key=value` per character-string (RFC 6763 §6.3), `v=1` and
 * both `capsha256` and `cap-sha256` (the name dns-aid-core's TXT reader uses); it is left out (a
 * problem says so) when a value exceeds 255 bytes. An agent whose label is invalid or already
 * taken, whose URL is not http(s), whose digest is not 64 hex digits, whose URL's host or owner
 * name cannot be written as a domain name ({@link zoneDomainNameProblem}) or whose SVCB record
 * would pass 65,535 octets is skipped with a problem.
 *
 * Whatever the agents hold, every line is one record or one comment: values are quoted and
 * escaped ({@link zoneCharacterString}), names are checked, comments escaped ({@link
 * zoneComment}); no line starts with `$` (a directive such as `$INCLUDE`).
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) for a domain that is not a DNS
 *   name or a TTL out of range.
 */
export function dnsAidZone(agents: readonly DnsAidPublishedAgent[], options: DnsAidZoneOptions): DnsAidZoneResult {
  const ttl = options.ttlSeconds ?? DNS_AID_DEFAULT_TTL_SECONDS;
  const optionProblems: Problem[] = [];
  const badDomain = dnsDomainProblem(options.domain);
  if (badDomain !== undefined) optionProblems.push({ path: 'domain', message: badDomain });
  if (!Number.isInteger(ttl) || ttl < 0 || ttl > 2 ** 31 - 1) optionProblems.push({ path: 'ttl', message: `must be a whole number of seconds from 0 to 2147483647, got ${String(ttl)}` });
  if (optionProblems.length > 0) throw new DiscoveryError('ERR_CONFIG_INVALID', `cannot print DNS-AID records: ${optionProblems.map((p) => `${p.path}: ${p.message}`).join('; ')}`, { stage: 'config', problems: optionProblems });

  const domain = options.domain.replace(/\.$/, '').toLowerCase();
  const records: DnsAidZoneRecord[] = [];
  const problems: Problem[] = [];
  const taken = new Map<string, string>();
  for (const agent of agents) {
    const skip = (message: string) => problems.push({ path: agent.name, message: `skipped: ${message}` });
    const label = dnsAidLabel(agent.name);
    const labelProblem = dnsAidLabelProblem(label);
    if (labelProblem !== undefined) {
      skip(`no DNS-AID label can be made of its name (${labelProblem})`);
      continue;
    }
    const holder = taken.get(label);
    if (holder !== undefined) {
      skip(`its label "${label}" is already ${holder}'s`);
      continue;
    }
    if (!isCapSha256(agent.cardSha256)) {
      skip(`its card digest ${JSON.stringify(agent.cardSha256)} is not a SHA-256 in hex`);
      continue;
    }
    const endpoint = endpointOf(agent.cardUrl);
    if (typeof endpoint === 'string') {
      skip(endpoint);
      continue;
    }
    const ownerProblem = zoneDomainNameProblem(dnsAidName(label, domain));
    if (ownerProblem !== undefined) {
      skip(`its owner name ${ownerProblem}`);
      continue;
    }
    const cap = new URL(agent.cardUrl).href;
    const sha = agent.cardSha256.toLowerCase();
    const owner = `${dnsAidName(label, domain)}.`;
    // Priority, target name, then alpn (4+1+3), port (4+2), a hint (4+4 or 4+16), cap, capsha256.
    const rdataOctets = 2 + (endpoint.ip === undefined ? endpoint.host.length + 2 : 1) + 8 + 6 + (endpoint.ip === undefined ? 0 : endpoint.ip === 4 ? 8 : 20) + 4 + Buffer.byteLength(cap) + 4 + sha.length;
    if (rdataOctets > MAX_RDATA_OCTETS) {
      skip(`its SVCB record would be ${rdataOctets} octets, more than a record holds (65535, RFC 1035 §3.2.1): the card URL is too long`);
      continue;
    }
    taken.set(label, agent.name);
    // An IP literal is no TargetName: the owner itself ('.') with the address as a hint.
    const hint = endpoint.ip === undefined ? undefined : `ipv${endpoint.ip}hint=${endpoint.host}`;
    const target = hint === undefined ? `${endpoint.host}.` : '.';
    const head = `${owner} ${ttl} IN`;
    const svcb = [
      `${head} SVCB 1 ${target}`,
      `alpn=${DNS_AID_A2A_PROTOCOL}`,
      `port=${endpoint.port}`,
      ...(hint !== undefined ? [hint] : []),
      `key${DNS_AID_PARAM_KEYS.cap}=${zoneCharacterString(cap)}`,
      `key${DNS_AID_PARAM_KEYS.capsha256}=${zoneCharacterString(sha)}`,
    ].join(' ');
    const pairs = [
      'v=1',
      hint ?? `target=${endpoint.host}`,
      `port=${endpoint.port}`,
      `alpn=${DNS_AID_A2A_PROTOCOL}`,
      `cap=${cap}`,
      `capsha256=${sha}`,
      `cap-sha256=${sha}`,
    ];
    const tooLong = pairs.find((p) => Buffer.byteLength(p) > MAX_CHARACTER_STRING);
    if (tooLong !== undefined) {
      problems.push({ path: agent.name, message: `TXT fallback left out: "${tooLong.slice(0, 40)}…" is ${Buffer.byteLength(tooLong)} bytes, more than a TXT character-string holds (255, RFC 1035 §3.3); the SVCB record carries it` });
    }
    records.push({ name: agent.name, label, owner, svcb, ...(tooLong === undefined && { txt: `${head} TXT ${pairs.map(zoneCharacterString).join(' ')}` }) });
  }

  let index: string | undefined;
  // `_index._agents.{domain}` is shorter than any agent's owner name (`_x._a2a._agents.{domain}`):
  // with one record published, it is a name a zone file holds.
  if (options.index !== false && records.length > 0) {
    const list = `agents=${records.map((r) => `${r.label}:${DNS_AID_A2A_PROTOCOL}`).join(',')}`;
    if (Buffer.byteLength(list) <= MAX_CHARACTER_STRING) index = `${dnsAidIndexName(domain)}. ${ttl} IN TXT ${zoneCharacterString(list)}`;
    else problems.push({ path: dnsAidIndexName(domain), message: `index left out: the list of ${records.length} agents is ${Buffer.byteLength(list)} bytes, more than one TXT character-string holds (255); readers must be given the agents' names` });
  }
  const lines = [
    ...problems.map((p) => zoneComment(`${p.path}: ${p.message}`)),
    ...(index !== undefined ? [index] : []),
    ...records.flatMap((r) => [r.svcb, ...(r.txt !== undefined ? [r.txt] : [])]),
  ];
  return { records, ...(index !== undefined && { index }), problems, lines };
}
