/**
 * Probing what DNS announces: a domain (its DNS-AID index and DNS-SD instances, or the agent labels
 * given) or one record name (`_billing._a2a._agents.example.com`, `research._a2a._tcp.example.com`).
 * The DNS source itself reads the records, so the probe shows exactly what discovery would
 * decide: each record with its TTL and DNSSEC status and its decision — `admitted` by the
 * allowlist, `refused` (with the reason), or `pinned` (its card fetched and its SHA-256 equal to the
 * record's `capsha256`; a differing card is `refused` with `ERR_DIGEST_MISMATCH`).
 *
 * @module
 */
import { sha256Hex } from '../card/index.js';
import { isDiscoveryError, type Problem } from '../errors.js';
import type { CardFetcher, HostPolicy } from '../fetch/index.js';
import { isCardUrl } from '../fetch/index.js';
import { DNS_AID_A2A_PROTOCOL, DNS_AID_LABEL, DNS_SD_A2A_SERVICE } from '../rules/dns-aid.js';
import type { DnsResolver } from '../sources/dns-resolver.js';
import { dnsSource, type DnsDomainOptions } from '../sources/dns-source.js';

/** What a probe decided about one record. */
export interface DnsProbeRecord {
  /** The record's owner name, with its type: `_billing._a2a._agents.example.com SVCB`. */
  readonly record: string;
  readonly decision: 'admitted' | 'refused' | 'pinned';
  /** Why it was refused. */
  readonly reason?: string;
  readonly code?: string;
  /** The agent's name, the endpoint proposed and the record's metadata (TTL, DNSSEC, realm, …). */
  readonly name?: string;
  readonly baseUrl?: string;
  readonly metadata?: Readonly<Record<string, string>>;
  /** The card's SHA-256, when it was fetched to check a pin. */
  readonly cardSha256?: string;
}

/** The result of {@link probeDns}. */
export interface DnsProbeReport {
  readonly kind: 'dns';
  readonly target: string;
  /** Every record admitted or pinned, none refused, and the lookups succeeded. */
  readonly accepted: boolean;
  readonly records: readonly DnsProbeRecord[];
  /** Names without records, index notes. */
  readonly notes: readonly Problem[];
  /** The lookup failure (SERVFAIL, timeout, an answer over the bounds). */
  readonly error?: { readonly code: string; readonly message: string };
}

/** Inputs of {@link probeDns}. */
export interface ProbeDnsOptions {
  resolver: DnsResolver;
  /** The allowlist every host a record names is judged by. */
  policy: HostPolicy;
  /** Fetches each pinned card to compare its SHA-256 (no fetch without it: the pin is reported as declared). */
  fetcher?: CardFetcher;
  requireDnssec?: boolean;
}

/**
 * Probes a domain or a DNS-AID / DNS-SD record name.
 *
 * @example
 * const report = await probeDns('example.com', { resolver: createDnsResolver({ servers: ['127.0.0.1:53'] }), policy, fetcher });
 * console.log(renderDnsProbe(report));
 */
export async function probeDns(target: string, o: ProbeDnsOptions): Promise<DnsProbeReport> {
  const name = target.replace(/^dns:/i, '').replace(/\.$/, '').toLowerCase();
  const domain = domainOf(name);
  const source = dnsSource({ id: 'probe', domains: [domain.options], resolver: o.resolver, hostPolicy: o.policy, requireDnssec: o.requireDnssec === true, scheme: 'https' });
  try {
    const state = await source.refresh();
    const records: DnsProbeRecord[] = [];
    const notes: Problem[] = [];
    for (const p of state.problems ?? []) {
      if (/; (the record is )?refused$/.test(p.message)) records.push({ record: p.path, decision: 'refused', reason: p.message, ...(/the allowlist refuses/.test(p.message) && { code: 'ERR_HOST_NOT_ALLOWED' }) });
      else notes.push(p);
    }
    for (const r of state.records) {
      if (domain.instance !== undefined && r.metadata['record'] !== domain.instance) continue;
      const record = `${r.metadata['record']} ${r.metadata['recordType']}`;
      const base = { record, name: r.name, baseUrl: r.baseUrl, metadata: r.metadata };
      let key: string;
      try {
        key = o.policy.normalizeEndpoint(r.baseUrl);
      } catch (err) {
        records.push({ ...base, decision: 'refused', reason: (err as Error).message, code: isDiscoveryError(err) ? err.code : 'ERR_HOST_NOT_ALLOWED' });
        continue;
      }
      const pin = r.metadata['pinnedSha256'];
      if (pin === undefined || o.fetcher === undefined) {
        records.push({ ...base, decision: 'admitted' });
        continue;
      }
      const cardUrl = isCardUrl(key) || key.includes('#') ? key.replace(/#card$/, '') : o.policy.cardUrl(key);
      try {
        const res = await o.fetcher.fetch(cardUrl);
        if (res.status !== 200) {
          records.push({ ...base, decision: 'refused', code: 'ERR_FETCH_STATUS', reason: `${cardUrl} answered ${res.status}; the pin cannot be checked` });
          continue;
        }
        const sha = sha256Hex(res.body);
        if (sha === pin) records.push({ ...base, decision: 'pinned', cardSha256: sha });
        else records.push({ ...base, decision: 'refused', code: 'ERR_DIGEST_MISMATCH', cardSha256: sha, reason: `the card's SHA-256 is ${sha}, but ${r.metadata['record']} pins ${pin} (capsha256); the card is refused` });
      } catch (err) {
        records.push({ ...base, decision: 'refused', code: isDiscoveryError(err) ? err.code : 'ERR_FETCH_NETWORK', reason: (err as Error).message });
      }
    }
    const error = state.ok ? undefined : { code: state.error!.code, message: state.error!.message };
    return Object.freeze({
      kind: 'dns',
      target,
      accepted: error === undefined && records.length > 0 && records.every((r) => r.decision !== 'refused'),
      records: Object.freeze(records),
      notes: Object.freeze(notes),
      ...(error !== undefined && { error }),
    });
  } finally {
    await source.close();
  }
}

/** What to read for a target: a DNS-AID name → that agent; a DNS-SD instance → its domain's instances, then only it; a domain → its index and DNS-SD. */
function domainOf(name: string): { options: DnsDomainOptions; instance?: string } {
  const aid = name.split(`._${DNS_AID_A2A_PROTOCOL}.${DNS_AID_LABEL}.`);
  if (aid.length === 2 && aid[0]!.startsWith('_')) return { options: { domain: aid[1]!, agents: [aid[0]!.slice(1)], index: false } };
  const sd = name.split(`.${DNS_SD_A2A_SERVICE}.`);
  if (sd.length === 2) return { options: { domain: sd[1]!, agents: [], index: false, dnsSd: true }, instance: name };
  return { options: { domain: name, index: true, dnsSd: true } };
}

/** The report as text: one line per record with its decision, then the notes. */
export function renderDnsProbe(r: DnsProbeReport): string {
  const lines = [`${r.accepted ? 'ACCEPTED' : 'REFUSED'} ${r.target} (DNS)`];
  if (r.error !== undefined) lines.push(`  lookup failed: ${r.error.code}: ${r.error.message}`);
  for (const rec of r.records) {
    const m = rec.metadata ?? {};
    const facts = [m['ttl'] !== undefined ? `TTL ${m['ttl']}s` : undefined, m['dnssec'], m['realm'] !== undefined ? `realm ${m['realm']}` : undefined].filter(Boolean).join(', ');
    lines.push(`  ${rec.decision.padEnd(8)} ${rec.record}${rec.baseUrl !== undefined ? ` → ${rec.baseUrl}` : ''}${facts ? ` (${facts})` : ''}`);
    if (rec.decision === 'pinned') lines.push(`           card SHA-256 ${rec.cardSha256} = capsha256`);
    else if (rec.decision === 'admitted' && m['pinnedSha256'] !== undefined) lines.push(`           capsha256 ${m['pinnedSha256']} (the card cache enforces it)`);
    if (rec.reason !== undefined) lines.push(`           ${rec.code !== undefined ? `${rec.code}: ` : ''}${rec.reason}`);
  }
  if (r.records.length === 0 && r.error === undefined) lines.push('  no A2A agent announced');
  for (const n of r.notes) lines.push(`  note: ${n.path}: ${n.message}`);
  return lines.join('\n');
}
