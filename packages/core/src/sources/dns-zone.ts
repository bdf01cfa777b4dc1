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
import { DNS_AID_A2A_PROTOCOL, DNS_AID_PARAM_KEYS, dnsAidIndexName, dnsAidLabel, dnsAidLabelProblem, dnsAidName, dnsDomainProblem, isCapSha256 } from '../rules/dns-aid.js';

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
export interface DnsAidZoneRecord {
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

/** Default TTL of the printed records: one hour, as DNS-AID's reference implementation publishes. */
export const DNS_AID_DEFAULT_TTL_SECONDS = 3600;

/** RFC 1035 §3.3: a <character-string> holds at most 255 octets. */
const MAX_CHARACTER_STRING = 255;

/**
 * A <character-string> in presentation format (RFC 1035 §5.1, RFC 9460 Appendix A): always
 * quoted, `"` and `\` escaped with a backslash, bytes outside printable ASCII as `\DDD`.
 */
function zoneCharacterString(value: string): string {
  let out = '"';
  for (const byte of Buffer.from(value, 'utf8')) {
    if (byte === 0x22 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte < 0x20 || byte > 0x7e) out += `\\${String(byte).padStart(3, '0')}`;
    else out += String.fromCharCode(byte);
  }
  return `${out}"`;
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
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const ip = isIP(host);
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { host, ...(ip !== 0 && { ip: ip as 4 | 6 }), port };
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
 * taken, whose URL is not http(s) or whose digest is not 64 hex digits is skipped with a problem.
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
    taken.set(label, agent.name);
    const cap = new URL(agent.cardUrl).href;
    const sha = agent.cardSha256.toLowerCase();
    const owner = `${dnsAidName(label, domain)}.`;
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
  if (options.index !== false && records.length > 0) {
    const list = `agents=${records.map((r) => `${r.label}:${DNS_AID_A2A_PROTOCOL}`).join(',')}`;
    if (Buffer.byteLength(list) <= MAX_CHARACTER_STRING) index = `${dnsAidIndexName(domain)}. ${ttl} IN TXT ${zoneCharacterString(list)}`;
    else problems.push({ path: dnsAidIndexName(domain), message: `index left out: the list of ${records.length} agents is ${Buffer.byteLength(list)} bytes, more than one TXT character-string holds (255); readers must be given the agents' names` });
  }
  const lines = [
    ...problems.map((p) => `; ${p.path}: ${p.message.replace(/[\r\n]+/g, ' ')}`),
    ...(index !== undefined ? [index] : []),
    ...records.flatMap((r) => [r.svcb, ...(r.txt !== undefined ? [r.txt] : [])]),
  ];
  return { records, ...(index !== undefined && { index }), problems, lines };
}
