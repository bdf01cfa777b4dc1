/**
 * The DNS source: agents a domain announces in DNS.
 *
 * - DNS-AID (draft-mozleywilliams-dnsop-dnsaid): an SVCB record at
 *   `_{name}._a2a._agents.{domain}` per agent, for the configured names and/or those the domain's
 *   `_index._agents` TXT entry lists; a TXT record at the same name is the fallback for zones
 *   without SVCB. `cap` is the agent card's URL, `capsha256` its SHA-256 (a pin the card cache
 *   enforces), `realm`, `policy` and `bap` are kept as metadata.
 * - DNS-SD (RFC 6763, draft-zhao-a2a-dns-sd): PTR `_a2a._tcp.{domain}` names instances, each
 *   with an SRV (host and port) and a TXT (`path`, `url`, `capsha256`).
 *
 * Every host a record names (the `cap` URL's, the SVCB or SRV target) must pass the allowlist,
 * or the record is refused here with its record name in the problem. With `requireDnssec`, an
 * answer the resolver did not validate (no AD bit) is refused. The next refresh comes at the
 * smallest TTL read (clamped to `minRefreshMs`…`maxRefreshMs`); a failed refresh (SERVFAIL,
 * timeout, an oversized answer) keeps the last good list. See docs/sources.md ("DNS").
 *
 * @module
 */
import { z } from 'zod';
import { systemClock, type Clock } from '../clock/index.js';
import { DiscoveryError, type Problem } from '../errors.js';
import type { EventStream } from '../events/index.js';
import { catalogCardUrl, type HostPolicy } from '../fetch/index.js';
import { DNS_SOURCE_DEFAULTS } from '../rules/defaults.js';
import { dnsAidIndexName, dnsAidLabelProblem, dnsAidName, dnsDomainProblem, dnsSdServiceName, isCapSha256 } from '../rules/dns-aid.js';
import { describe } from '../text.js';
import { CatalogArtifacts, type CardPin } from './catalog-artifacts.js';
import { decodeSvcb, readDnsAidIndex, svcbFromTxt, txtPairs, urlHost, type SvcbData } from './dns-rdata.js';
import type { DnsAnswer, DnsQueryType, DnsResolver } from './dns-resolver.js';
import { PeriodicSource, type Listing } from './periodic-source.js';
import { positiveIntProblem } from './source-core.js';
import { optional, positiveInt, readOptions, rule, sourceId, withMethod } from './source-options.js';
import type { EndpointRecord, Source } from './types.js';

/** One domain of {@link DnsSourceOptions.domains}. */
export interface DnsDomainOptions {
  /** The domain, e.g. `example.com`. */
  domain: string;
  /** DNS-AID agent labels: `billing` → `_billing._a2a._agents.{domain}`. */
  agents?: readonly string[];
  /** Also read the agents the domain's `_index._agents` TXT entry lists. Default: true when no `agents` are given. */
  index?: boolean;
  /** Also read DNS-SD: PTR `_a2a._tcp.{domain}` → SRV + TXT. Default false. */
  dnsSd?: boolean;
}

/** Inputs of {@link dnsSource}. Durations are milliseconds. */
export interface DnsSourceOptions {
  /** Source id, e.g. `'dns'`. */
  id: string;
  domains: readonly DnsDomainOptions[];
  /** The DNS client (`createDnsResolver({ servers })`, or another implementation). */
  resolver: DnsResolver;
  /** The allowlist: every host a record names must pass it. */
  hostPolicy: HostPolicy;
  /** Shared with the card cache: the `capsha256` pins are published there. Default: the source's own (give `source.artifacts` to the cache). */
  artifacts?: CatalogArtifacts;
  /** Refuse every answer the resolver did not validate with DNSSEC (no AD bit). Default false. */
  requireDnssec?: boolean;
  /** The scheme of a base URL made from a target host (a record without `cap`). Default `https`. */
  scheme?: 'https' | 'http';
  /** Agents (named, indexed, DNS-SD instances) read per refresh; past it the refresh fails. Default 200. */
  maxAgents?: number;
  /** Earliest next refresh. Default 30,000. */
  minRefreshMs?: number;
  /** Latest next refresh (and the interval when no record was read). Default 3,600,000. */
  maxRefreshMs?: number;
  events?: EventStream;
  clock?: Clock;
}

/** The DNS source. */
export interface DnsSource extends Source {
  /** The table the card cache must read pins from. */
  readonly artifacts: CatalogArtifacts;
  /** The next refresh's delay: the smallest TTL of the last list, clamped. */
  readonly pollIntervalMs: number;
}

/**
 * Creates a DNS source. Pure: validates the options and does no I/O.
 *
 * Records: `name` = the agent label (DNS-AID) or the instance label (DNS-SD); `baseUrl` = the
 * `cap` URL (fetched exactly there) or `{scheme}://{target}[:{port}]/`; `metadata` =
 * `{ record, recordType, ttl, domain, resolver, dnssec, realm?, policy?, bap?, alpn?, pinnedSha256? }`.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) for bad options, listing each.
 * @example
 * const artifacts = new CatalogArtifacts();
 * const source = dnsSource({ id: 'dns', domains: [{ domain: 'example.com', agents: ['billing'] }],
 *   resolver: createDnsResolver({ servers: ['127.0.0.1:53'] }), hostPolicy: policy, artifacts });
 * const cache = new CardCache({ fetcher: artifacts.fetcher(fetcher), pins: artifacts, hostPolicy: policy });
 */
export function dnsSource(options: DnsSourceOptions): DnsSource {
  const domains: Required<DnsDomainOptions>[] = [];
  const o = readOptions('DNS source', DNS_OPTIONS, options, (raw, add) => {
    if (Array.isArray(raw['domains'])) raw['domains'].forEach((d: Partial<DnsDomainOptions> | undefined, i) => {
      const problem = dnsDomainProblem(d?.domain);
      if (problem !== undefined) return add(`domains[${i}].domain`, problem);
      const agents = d!.agents ?? [];
      if (!Array.isArray(agents)) return add(`domains[${i}].agents`, `must be a list of agent labels, got ${describe(agents)}`);
      agents.forEach((a: unknown, j) => {
        const why = typeof a === 'string' ? dnsAidLabelProblem(a) : `must be an agent label, got ${describe(a)}`;
        if (why !== undefined) add(`domains[${i}].agents[${j}]`, why);
      });
      domains.push({ domain: d!.domain!.replace(/\.$/, '').toLowerCase(), agents, index: d!.index ?? agents.length === 0, dnsSd: d!.dnsSd === true });
    });
    const min = orDefault(raw['minRefreshMs'], DNS_SOURCE_DEFAULTS.minRefreshMs);
    const max = orDefault(raw['maxRefreshMs'], DNS_SOURCE_DEFAULTS.maxRefreshMs);
    if (min > max) add('minRefreshMs', `${min} is more than maxRefreshMs ${max}`);
  });
  return new DnsDiscovery({
    id: o.id,
    domains,
    resolver: o.resolver,
    hostPolicy: o.hostPolicy,
    artifacts: o.artifacts ?? new CatalogArtifacts(),
    requireDnssec: o.requireDnssec === true,
    scheme: o.scheme ?? 'https',
    maxAgents: o.maxAgents ?? DNS_SOURCE_DEFAULTS.maxAgents,
    minRefreshMs: o.minRefreshMs ?? DNS_SOURCE_DEFAULTS.minRefreshMs,
    maxRefreshMs: o.maxRefreshMs ?? DNS_SOURCE_DEFAULTS.maxRefreshMs,
    events: o.events,
    clock: o.clock ?? systemClock,
  });
}

/** A valid positive integer option, or the default (which the bound between two options then uses). */
function orDefault(value: unknown, fallback: number): number {
  return positiveIntProblem(value) === undefined ? (value as number) : fallback;
}

/** The options of {@link dnsSource}, each with its sentence (each domain's entries are read above). */
const DNS_OPTIONS = {
  id: sourceId,
  domains: rule<readonly DnsDomainOptions[]>((v) => (Array.isArray(v) && v.length > 0 ? undefined : 'give at least one domain ({ domain: "example.com", agents: ["billing"] })')),
  resolver: withMethod<DnsResolver>('query', 'a DnsResolver is required (createDnsResolver({ servers }))'),
  hostPolicy: withMethod<HostPolicy>('check', 'the HostPolicy (allowlist) is required'),
  scheme: optional<'https' | 'http'>((v) => (v === 'https' || v === 'http' ? undefined : `must be "https" or "http", got ${describe(v)}`)),
  minRefreshMs: positiveInt,
  maxRefreshMs: positiveInt,
  maxAgents: positiveInt,
  artifacts: z.custom<CatalogArtifacts | undefined>(),
  requireDnssec: z.custom<boolean | undefined>(),
  events: z.custom<EventStream | undefined>(),
  clock: z.custom<Clock | undefined>(),
};

interface Settings {
  id: string;
  domains: readonly Required<DnsDomainOptions>[];
  resolver: DnsResolver;
  hostPolicy: HostPolicy;
  artifacts: CatalogArtifacts;
  requireDnssec: boolean;
  scheme: 'https' | 'http';
  maxAgents: number;
  minRefreshMs: number;
  maxRefreshMs: number;
  events: EventStream | undefined;
  clock: Clock;
}

/** What one refresh gathers. */
interface Gathered {
  records: EndpointRecord[];
  pins: Map<string, CardPin>;
  problems: Problem[];
  /** The smallest TTL of the records read, seconds. */
  minTtl: number;
}

/** An announced agent before the allowlist: where it was read and what it says. */
interface Announcement {
  name: string;
  domain: string;
  owner: string;
  recordType: 'SVCB' | 'TXT' | 'SRV';
  ttl: number;
  answer: DnsAnswer;
  svcb: SvcbData;
  /** DNS-SD: the card path or URL from the instance's TXT. */
  path?: string;
  url?: string;
}

class DnsDiscovery extends PeriodicSource implements DnsSource {
  override readonly kind = 'dns' as const;
  readonly artifacts: CatalogArtifacts;
  readonly #s: Settings;

  constructor(settings: Settings) {
    // A failed refresh is retried soon (minRefreshMs); the last good list (and its pins) stays.
    super({
      id: settings.id,
      kind: 'dns',
      pollIntervalMs: settings.minRefreshMs,
      closedReason: 'the DNS source was closed',
      failure: { code: 'ERR_FETCH_NETWORK', prefix: `DNS source ${settings.id}: ` },
      events: settings.events,
      clock: settings.clock,
    });
    this.#s = settings;
    this.artifacts = settings.artifacts;
  }

  protected override released(): void {
    this.artifacts.withdraw(this.id);
  }

  protected async read(signal: AbortSignal): Promise<Listing> {
    const gathered = await this.#gather(signal);
    const ttlMs = Number.isFinite(gathered.minTtl) ? gathered.minTtl * 1000 : this.#s.maxRefreshMs;
    return {
      records: gathered.records,
      problems: gathered.problems,
      pollIntervalMs: Math.min(this.#s.maxRefreshMs, Math.max(this.#s.minRefreshMs, ttlMs)),
      commit: () => this.artifacts.publish(this.id, { inline: new Map(), pins: gathered.pins, freshen: async () => ({ ok: true, freshMs: 0 }) }),
    };
  }

  async #gather(signal: AbortSignal): Promise<Gathered> {
    const out: Gathered = { records: [], pins: new Map(), problems: [], minTtl: Number.POSITIVE_INFINITY };
    const announcements: Announcement[] = [];
    let agents = 0;
    const count = (): void => {
      if (++agents > this.#s.maxAgents) throw new DiscoveryError('ERR_BODY_TOO_LARGE', `DNS source ${this.id}: more than maxAgents ${this.#s.maxAgents} agents announced; the last good list is kept`, { stage: 'source' });
    };
    for (const d of this.#s.domains) {
      const names = [...d.agents];
      if (d.index) {
        const owner = dnsAidIndexName(d.domain);
        const answer = await this.#query(owner, 'TXT', signal, out.problems);
        if (answer.records.length === 0) {
          if (d.agents.length === 0) out.problems.push({ path: owner, message: `no TXT index entry (${answer.rcode}); list the agents under agents:` });
        } else if (this.#trusted(answer, out.problems)) {
          out.minTtl = Math.min(out.minTtl, ...answer.records.map((r) => r.ttl));
          const index = readDnsAidIndex(answer.records.flatMap((r) => r.data as string[]));
          if (index.registry !== undefined) out.problems.push({ path: owner, message: `points to the registry ${index.registry}, which this source does not read; configure it under sources.registries or sources.ard` });
          for (const a of index.agents) {
            const why = dnsAidLabelProblem(a);
            if (why !== undefined) out.problems.push({ path: owner, message: `${why}; skipped` });
            else if (!names.includes(a)) names.push(a);
          }
        }
      }
      for (const _ of names) count();
      announcements.push(...(await inParallel(names, out.problems, (name, problems) => this.#agent(d.domain, name, problems, signal))));
      if (d.dnsSd) {
        const service = dnsSdServiceName(d.domain);
        const ptr = await this.#query(service, 'PTR', signal, out.problems);
        if (ptr.records.length > 0 && this.#trusted(ptr, out.problems)) {
          out.minTtl = Math.min(out.minTtl, ...ptr.records.map((r) => r.ttl));
          const instances = [...new Set(ptr.records.map((r) => r.data as string))];
          for (const _ of instances) count();
          announcements.push(...(await inParallel(instances, out.problems, (instance, problems) => this.#instance(d.domain, instance, problems, signal))));
        } else if (ptr.records.length === 0) out.problems.push({ path: service, message: `no PTR record (${ptr.rcode}): no DNS-SD instance announced` });
      }
    }
    for (const a of announcements) {
      const record = this.#record(a, out.pins, out.problems);
      if (record === undefined) continue;
      out.records.push(record);
      out.minTtl = Math.min(out.minTtl, a.ttl);
    }
    return out;
  }

  /**
   * One question. Records the resolver ignored because their owner is another name (a hostile or
   * broken answer adding a record for some other agent or domain) are reported as a problem, so an
   * operator sees them; they are never read as this name's records.
   */
  async #query(name: string, type: DnsQueryType, signal: AbortSignal, problems: Problem[]): Promise<DnsAnswer> {
    const answer = await this.#s.resolver.query(name, type, { signal });
    const ignored = answer.ignoredOwners ?? [];
    if (ignored.length > 0) {
      const shown = ignored.slice(0, IGNORED_OWNERS_SHOWN).join(', ') + (ignored.length > IGNORED_OWNERS_SHOWN ? `, and ${ignored.length - IGNORED_OWNERS_SHOWN} more` : '');
      problems.push({ path: `${name} ${type}`, message: `the answer from resolver ${answer.server} carried ${type} records for other owner names (${shown}); they are ignored, only records owned by ${name} (or its CNAME target) are read` });
    }
    return answer;
  }

  /** With `requireDnssec`, refuses (with a problem) an answer without the AD bit. */
  #trusted(answer: DnsAnswer, problems: Problem[]): boolean {
    if (!this.#s.requireDnssec || answer.authenticated) return true;
    problems.push({ path: answer.name, message: `the ${answer.type} answer for ${answer.name} was not DNSSEC-validated by resolver ${answer.server}: no AD bit (requireDnssec: true); refused` });
    return false;
  }

  /** An agent's DNS-AID SVCB record, or its TXT fallback. */
  async #agent(domain: string, name: string, problems: Problem[], signal: AbortSignal): Promise<Announcement | undefined> {
    const owner = dnsAidName(name, domain);
    const svcb = await this.#query(owner, 'SVCB', signal, problems);
    if (svcb.records.length > 0) {
      if (!this.#trusted(svcb, problems)) return undefined;
      const decoded: Array<{ data: SvcbData; ttl: number }> = [];
      for (const r of svcb.records) {
        try {
          decoded.push({ data: decodeSvcb(r.data as Uint8Array), ttl: r.ttl });
        } catch (err) {
          problems.push({ path: `${owner} SVCB`, message: `${(err as Error).message}; the record is skipped` });
        }
      }
      // RFC 9460 §2.4.1: AliasMode (priority 0) is not followed here; ServiceMode by priority.
      if (decoded.some((d) => d.data.priority === 0)) problems.push({ path: `${owner} SVCB`, message: 'an AliasMode record (priority 0) is not followed; publish ServiceMode records at the DNS-AID name' });
      const best = decoded.filter((d) => d.data.priority > 0).sort((a, b) => a.data.priority - b.data.priority)[0];
      if (best === undefined) return undefined;
      return { name, domain, owner, recordType: 'SVCB', ttl: best.ttl, answer: svcb, svcb: best.data };
    }
    const txt = await this.#query(owner, 'TXT', signal, problems);
    if (txt.records.length === 0) {
      problems.push({ path: owner, message: `no SVCB or TXT record (${txt.rcode})` });
      return undefined;
    }
    if (!this.#trusted(txt, problems)) return undefined;
    const first = txt.records[0]!;
    try {
      return { name, domain, owner, recordType: 'TXT', ttl: Math.min(...txt.records.map((r) => r.ttl)), answer: txt, svcb: svcbFromTxt(first.data as string[]) };
    } catch (err) {
      problems.push({ path: `${owner} TXT`, message: `${(err as Error).message}; the record is skipped` });
      return undefined;
    }
  }

  /** A DNS-SD instance: its SRV (host, port) and TXT (`path`, `url`, `capsha256`). */
  async #instance(domain: string, instance: string, problems: Problem[], signal: AbortSignal): Promise<Announcement | undefined> {
    const srv = await this.#query(instance, 'SRV', signal, problems);
    if (srv.records.length === 0) {
      problems.push({ path: instance, message: `no SRV record (${srv.rcode}); the instance is skipped` });
      return undefined;
    }
    if (!this.#trusted(srv, problems)) return undefined;
    const best = [...srv.records].sort((a, b) => (a.data as { priority: number }).priority - (b.data as { priority: number }).priority)[0]!;
    const data = best.data as { port: number; target: string };
    const txt = await this.#query(instance, 'TXT', signal, problems);
    if (txt.records.length > 0 && !this.#trusted(txt, problems)) return undefined;
    const pairs = txtPairs(txt.records.flatMap((r) => r.data as string[]));
    const capsha256 = pairs.get('capsha256');
    const ttl = Math.min(best.ttl, ...txt.records.map((r) => r.ttl));
    const label = instance.slice(0, instance.length - `.${dnsSdServiceName(domain)}`.length) || instance;
    const path = pairs.get('path');
    const url = pairs.get('url');
    return {
      name: label,
      domain,
      owner: instance,
      recordType: 'SRV',
      ttl,
      answer: srv,
      svcb: { priority: 1, target: data.target || '.', port: data.port, dnsAid: capsha256 !== undefined ? { capsha256 } : {}, otherKeys: [] },
      ...(path !== undefined && path !== '' && { path }),
      ...(url !== undefined && url !== '' && { url }),
    };
  }

  /** The endpoint record of an announcement, after the allowlist judged every host it names. */
  #record(a: Announcement, pins: Map<string, CardPin>, problems: Problem[]): EndpointRecord | undefined {
    const where = `${a.owner} ${a.recordType}`;
    const refuse = (message: string): undefined => {
      problems.push({ path: where, message: `${message}; the record is refused` });
      return undefined;
    };
    const { svcb } = a;
    const cap = a.url ?? svcb.dnsAid.cap;
    const named: string[] = [];
    let targetBase: string | undefined;
    if (svcb.target !== '.') {
      // The cap URL's scheme says how the agent is reached; without one, the source's scheme.
      const scheme = cap !== undefined && isHttpUrl(cap) ? new URL(cap).protocol.slice(0, -1) : this.#s.scheme;
      const defaultPort = scheme === 'https' ? 443 : 80;
      const port = svcb.port !== undefined && svcb.port !== defaultPort ? `:${svcb.port}` : '';
      targetBase = `${scheme}://${urlHost(svcb.target)}${port}/`;
      named.push(targetBase);
    }
    let baseUrl: string;
    if (cap !== undefined) {
      if (!isHttpUrl(cap)) return refuse(`cap ${describe(cap)} is not an http(s) URL`);
      baseUrl = catalogCardUrl(cap);
      named.push(cap);
    } else if (targetBase !== undefined) {
      baseUrl = a.path !== undefined ? catalogCardUrl(new URL(a.path, targetBase).href) : targetBase;
    } else return refuse('names no host: the target is "." and there is no cap URL');
    for (const url of named) {
      const verdict = this.#s.hostPolicy.check(url);
      if (!verdict.allowed) return refuse(`names ${url}, which the allowlist refuses: ${verdict.reason}`);
    }
    const metadata: Record<string, string> = {
      record: a.owner,
      recordType: a.recordType,
      ttl: String(a.ttl),
      domain: a.domain,
      resolver: a.answer.server,
      dnssec: a.answer.authenticated ? 'validated' : 'not validated',
    };
    for (const k of ['realm', 'policy', 'bap'] as const) if (svcb.dnsAid[k] !== undefined) metadata[k] = svcb.dnsAid[k]!;
    if (svcb.alpn !== undefined) metadata['alpn'] = svcb.alpn.join(',');
    const sha = svcb.dnsAid.capsha256;
    if (sha !== undefined) {
      if (!isCapSha256(sha)) return refuse(`capsha256 ${describe(sha)} is not a SHA-256 in hex (64 hex digits)`);
      const pinned = sha.toLowerCase();
      let key: string;
      try {
        key = this.#s.hostPolicy.normalizeEndpoint(baseUrl);
      } catch (err) {
        return refuse(err instanceof Error ? err.message : String(err));
      }
      const other = pins.get(key);
      // Two records naming one card with different digests: the first read stays, neither is trusted to be the other.
      if (other !== undefined && other.sha256 !== pinned) return refuse(`names the card ${key} that ${other.from} pins to another capsha256`);
      pins.set(key, { sha256: pinned, from: `DNS record ${a.owner} (capsha256)` });
      metadata['pinnedSha256'] = pinned;
    }
    return { name: a.name, baseUrl, source: this.id, metadata };
  }
}

/** Owner names of ignored records named in one problem (the rest are counted). */
const IGNORED_OWNERS_SHOWN = 5;

/** Lookups a few at a time; results and problems in the items' order, whatever order the answers come in. */
const LOOKUPS_AT_ONCE = 8;

async function inParallel<T, R>(items: readonly T[], problems: Problem[], lookup: (item: T, problems: Problem[]) => Promise<R | undefined>): Promise<R[]> {
  const results = new Array<{ found: R | undefined; problems: Problem[] }>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      const own: Problem[] = [];
      results[i] = { found: await lookup(items[i]!, own), problems: own };
    }
  };
  await Promise.all(Array.from({ length: Math.min(LOOKUPS_AT_ONCE, items.length) }, worker));
  const out: R[] = [];
  for (const r of results) {
    problems.push(...r.problems);
    if (r.found !== undefined) out.push(r.found);
  }
  return out;
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}
