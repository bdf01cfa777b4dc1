/**
 * `a2a-discovery dns-records --domain <d> (--url <service> | --catalog <file>)`: the DNS-AID
 * records (SVCB with `cap` and `capsha256`, TXT fallback, `_index._agents`) of the agents of a
 * service's current snapshot, as zone-file lines for an operator to paste into their zone.
 *
 * The agents come from the service's AI Catalog (`/.well-known/ai-catalog.json`,
 * `server.catalog.enabled`), or a saved copy of it: each entry names the card URL the service
 * read and, in its `dev.a2a-discovery.agent` extension, the local name and the SHA-256 of the
 * card's bytes — the digest a DNS-AID reader pins. A configuration alone has no cards to hash.
 */
import { DiscoveryError, isDiscoveryError } from 'a2a-discovery';
import { A2A_CARD_MEDIA_TYPE, AI_CATALOG_WELL_KNOWN_PATH, createDeploymentFetch, dnsAidZone, zoneComment } from 'a2a-discovery/internal';
import { readBoundedFile } from 'a2a-discovery/config';
import type { Problem } from 'a2a-discovery';
import type { DnsAidPublishedAgent, DnsAidZoneResult } from 'a2a-discovery/internal';
import type { Io } from './flags.js';

/** The extension of a service's catalog entry: `{ localName, canonicalSha256, rawSha256 }` (registry/entry.ts). */
const AGENT_EXTENSION = 'dev.a2a-discovery.agent';
const SNAPSHOT_EXTENSION = 'dev.a2a-discovery.snapshot';

/** Catalog entries carry URLs, or a card inline: 8 MiB is room for hundreds of agents. */
const MAX_CATALOG_BYTES = 8 * 1024 * 1024;

/** The flags as commander parses them (commands/dns-records.ts). */
export interface DnsRecordsFlags {
  domain: string;
  url?: string;
  catalog?: string;
  ttl: number;
  index: boolean;
  json: boolean;
}

/** What the catalog gives: the agents, the entries skipped, and the snapshot it publishes. */
interface CatalogAgents {
  agents: DnsAidPublishedAgent[];
  skipped: Problem[];
  snapshot?: { digest: string; version: number };
}

function usage(message: string): DiscoveryError {
  return new DiscoveryError('ERR_USAGE', message, { stage: 'config' });
}

/** The catalog document: `--url` (the service's base URL, or the catalog's own URL) or `--catalog`. */
async function readCatalog(flags: DnsRecordsFlags): Promise<{ doc: unknown; base?: string; source: string }> {
  if ((flags.url === undefined) === (flags.catalog === undefined)) throw usage('give one of --url <service> or --catalog <file>');
  if (flags.catalog !== undefined) {
    let text: string;
    try {
      // The same cap as a catalog read from the service; a FIFO or a directory is refused, not waited on.
      text = (await readBoundedFile(flags.catalog, MAX_CATALOG_BYTES)).toString('utf8');
    } catch (err) {
      throw new DiscoveryError('ERR_USAGE', `cannot read ${flags.catalog}: ${(err as Error).message}`, { stage: 'config', cause: err });
    }
    try {
      return { doc: JSON.parse(text) as unknown, source: flags.catalog };
    } catch {
      throw usage(`${flags.catalog} is not JSON`);
    }
  }
  let target: string;
  try {
    const u = new URL(flags.url!);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw usage('not http(s)');
    target = u.pathname.endsWith('.json') ? u.href : new URL(AI_CATALOG_WELL_KNOWN_PATH, u).href;
  } catch {
    throw usage(`--url ${JSON.stringify(flags.url)} is not an http(s) URL`);
  }
  // The operator's own service, through the guarded fetch (no redirects, its addresses judged, the answer bounded).
  const service = createDeploymentFetch({ origin: new URL(target).origin, timeoutMs: 10_000, maxResponseBytes: MAX_CATALOG_BYTES, maxResponseName: 'the catalog cap' });
  let res: Response;
  let bytes: Buffer;
  try {
    res = await service(target, { headers: { accept: 'application/ai-catalog+json, application/json' } });
    bytes = Buffer.from(await res.arrayBuffer());
  } catch (err) {
    if (isDiscoveryError(err) && err.code === 'ERR_BODY_TOO_LARGE') throw usage(`${target} answered more than ${MAX_CATALOG_BYTES} bytes`);
    throw new DiscoveryError('ERR_USAGE', `cannot read ${target}: ${err instanceof Error ? err.message : String(err)}`, { stage: 'config', cause: err });
  } finally {
    await service.close();
  }
  if (res.status !== 200) {
    const hint =
      res.status === 404 ? ' (is server.catalog.enabled on? dns-records reads the service\'s AI Catalog)' : res.status === 503 ? ' (no snapshot is published yet: retry when the first discovery pass is done)' : '';
    throw usage(`${target} answered ${res.status}${hint}`);
  }
  try {
    return { doc: JSON.parse(bytes.toString('utf8')) as unknown, base: target, source: target };
  } catch {
    throw usage(`${target} did not answer JSON`);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The agents of an a2a-discovery AI Catalog: each agent-card entry with a URL and the card's SHA-256. */
function catalogAgents(doc: unknown, base: string | undefined, source: string): CatalogAgents {
  if (!isObject(doc) || !Array.isArray(doc.entries)) throw usage(`${source} is not an AI Catalog (no entries list)`);
  const agents: DnsAidPublishedAgent[] = [];
  const skipped: Problem[] = [];
  doc.entries.forEach((entry: unknown, i: number) => {
    const path = `entries[${i}]`;
    if (!isObject(entry) || entry.type !== A2A_CARD_MEDIA_TYPE) return; // the registry entry, other media types
    const ext = isObject(entry.extensions) && isObject(entry.extensions[AGENT_EXTENSION]) ? entry.extensions[AGENT_EXTENSION] : {};
    const name = typeof ext.localName === 'string' ? ext.localName : typeof entry.displayName === 'string' ? entry.displayName : path;
    if (typeof entry.url !== 'string') {
      skipped.push({ path: name, message: 'skipped: its card is carried inline in the catalog; there is no card URL to publish as cap' });
      return;
    }
    if (typeof ext.rawSha256 !== 'string') {
      skipped.push({ path: name, message: `skipped: the entry has no ${AGENT_EXTENSION} rawSha256 (not a catalog of a2a-discovery); there is no card digest to publish as capsha256` });
      return;
    }
    let cardUrl: string;
    try {
      cardUrl = new URL(entry.url, base).href;
    } catch {
      skipped.push({ path: name, message: `skipped: url ${JSON.stringify(entry.url)} is not absolute` });
      return;
    }
    agents.push({ name, cardUrl, cardSha256: ext.rawSha256 });
  });
  const snap = isObject(doc.extensions) && isObject(doc.extensions[SNAPSHOT_EXTENSION]) ? doc.extensions[SNAPSHOT_EXTENSION] : undefined;
  const snapshot = snap !== undefined && typeof snap.digest === 'string' && typeof snap.version === 'number' ? { digest: snap.digest, version: snap.version } : undefined;
  return { agents, skipped, ...(snapshot && { snapshot }) };
}

/** Reads the catalog and prints the records; resolves to whether any agent was published. */
export async function runDnsRecords(flags: DnsRecordsFlags, io: Io): Promise<boolean> {
  const { doc, base, source } = await readCatalog(flags);
  const { agents, skipped, snapshot } = catalogAgents(doc, base, source);
  const zone: DnsAidZoneResult = dnsAidZone(agents, { domain: flags.domain, ttlSeconds: flags.ttl, index: flags.index });
  const problems = [...skipped, ...zone.problems];
  const domain = flags.domain.replace(/\.$/, '').toLowerCase();
  if (flags.json) {
    const report = {
      domain,
      ttl: flags.ttl,
      source,
      snapshot: snapshot ?? null,
      records: zone.records,
      index: zone.index ?? null,
      problems,
      lines: zone.lines,
    };
    io.out(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    const from = snapshot !== undefined ? `snapshot version ${snapshot.version} (${snapshot.digest.slice(0, 12)}) of ${source}` : source;
    // The catalog's names, digest and the source are anyone's text: comments escape them, so
    // that none can end its line and start a record or a `$INCLUDE` of its own.
    const header = [zoneComment(`DNS-AID records for ${domain}: ${zone.records.length} agent${zone.records.length === 1 ? '' : 's'}, from ${from}`)];
    const comments = skipped.map((p) => zoneComment(`${p.path}: ${p.message}`));
    io.out(`${[...header, ...comments, ...zone.lines].join('\n')}\n`);
  }
  if (zone.records.length === 0) io.err(`no agent to publish from ${source}${problems.length > 0 ? ` (${problems.length} skipped)` : ''}\n`);
  return zone.records.length > 0;
}
