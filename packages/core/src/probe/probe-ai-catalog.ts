/**
 * Probing an AI Catalog (`application/ai-catalog+json`): what discovery would decide about every
 * entry. At a URL, a real {@link aiCatalogSource} reads the catalog tree (allowlist, fetch bounds,
 * catalog signature, nesting depth, cycles, versions, Trust Manifests) and its records, problems
 * and catalog reports are the decisions; each proposed card is then probed like one URL
 * ({@link probeEndpoint}) or, carried inline, checked like one card ({@link probeCard}). A
 * catalog in hand (a file, a pasted document) is read with the same reader and the same version
 * and Trust Manifest rules; its `url` entries are probed as card URLs, its `data` entries checked
 * as cards, and nothing is served.
 */
import type { SignatureOptions, SignatureResult } from '../card/index.js';
import { canonicalJson, sha256Hex, verifyDetachedSignature } from '../card/index.js';
import type { AiCatalog, AiCatalogEntry, ManifestVerdict, ReadCatalogResult } from '../catalog/index.js';
import { A2A_CARD_MEDIA_TYPE, AI_CATALOG_MEDIA_TYPE, DEFAULT_CATALOG_LIMITS, isSemanticVersion, judgeTrustManifest, readAiCatalog, readAiCatalogValue, selectVersions } from '../catalog/index.js';
import type { Problem } from '../errors.js';
import { isDiscoveryError, toDiscoveryError } from '../errors.js';
import type { CardFetcher, FetchResult } from '../fetch/index.js';
import { catalogCardUrl } from '../fetch/index.js';
import type { AiCatalogSource, EndpointRecord, CatalogReport as SourceCatalogReport } from '../sources/index.js';
import { aiCatalogSource } from '../sources/index.js';
import { describe } from '../text.js';
import type { AiCatalogDocumentReport, AiCatalogEntryReport, AiCatalogReport, CatalogStage } from './ai-catalog-report.js';
import { DEFAULT_PROBE_CONCURRENCY, DEFAULT_PROBE_ENTRIES } from './probe-catalog.js';
import type { ProbeEndpointOptions } from './probe-endpoint.js';
import { probeCard, probeEndpoint } from './probe-endpoint.js';
import type { ProbeReport } from './probe-report.js';
import { refusedReport } from './probe-report.js';

/** Inputs of {@link probeAiCatalogUrl} and {@link probeAiCatalogDocument}. Signatures (of the catalog, its Trust Manifests and its cards) are `check.signatures`. */
export interface ProbeAiCatalogOptions extends ProbeEndpointOptions {
  /** Fetches catalog documents (larger than cards: the service bounds them at 1 MiB). Default `fetcher`. Not closed here. */
  catalogFetcher?: CardFetcher;
  /** A catalog in hand: what to call it (a file's path). Default `the pasted catalog`. */
  label?: string;
  /** Card entries probed at most; later ones are listed as not probed. Default 20, as {@link probeCatalog}. */
  maxEntries?: number;
  /** Card entries probed at the same time. Default 4. */
  concurrency?: number;
  /** Nesting depth followed (the root catalog is depth 1). Default 4, as the source. */
  maxDepth?: number;
  /** Wall clock (epoch ms) for Trust Manifest expiry. Default `Date.now`. */
  now?: () => number;
}

const DEFAULT_MAX_DEPTH = 4;
/** The source's walk bound over every document (its default); entries past it are not read. */
const WALK_ENTRIES = DEFAULT_CATALOG_LIMITS.maxEntries;

/**
 * True when a response or a document is an AI Catalog: its content type is
 * `application/ai-catalog+json`, or it is a JSON object with `specVersion` and `entries`.
 *
 * @example if (isAiCatalogDocument(bytes)) report = await probeAiCatalogDocument(bytes, options);
 */
export function isAiCatalogDocument(body: Uint8Array | string, contentType?: string): boolean {
  if (contentType !== undefined && contentType.split(';')[0]!.trim().toLowerCase() === AI_CATALOG_MEDIA_TYPE) return true;
  let value: unknown;
  try {
    value = JSON.parse(typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch {
    return false;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'specVersion' in value && 'entries' in value;
}

/** A document as read for the report, with its parsed catalog when usable. */
interface Doc {
  report: AiCatalogDocumentReport;
  catalog?: AiCatalog;
}

/** An entry in walk order, with what the caller decided about it before the cards are probed. */
interface Walked {
  entry: AiCatalogEntry;
  report: AiCatalogEntryReport;
  /** `<catalog> <path>`: where the source and version selection name it. */
  where: string;
}

/** A chosen card entry, ready to probe. */
interface CardWork {
  walked: Walked;
  pin?: string;
  probe: () => Promise<ProbeReport>;
}

/**
 * Probes the AI Catalog at `url` with a real AI Catalog source under `o.policy` (a catalog or card
 * on a host it refuses is never contacted), then each card entry the source proposes (bounded by
 * `maxEntries`, `concurrency` at a time). Never throws for bad input: an unusable catalog is a
 * report whose root document says why. `first` (internal): the response of the request that
 * recognised the catalog, given to the source instead of fetching it twice.
 *
 * @example
 * const r = await probeAiCatalogUrl('https://agents.example.com/.well-known/ai-catalog.json', { policy, fetcher, interfacePolicy: policy });
 * for (const e of r.entries) console.log(e.path, e.identifier, e.verdict, e.report?.stage);
 */
export async function probeAiCatalogUrl(url: string, o: ProbeAiCatalogOptions, first?: { url: string; res: FetchResult }): Promise<AiCatalogReport> {
  const signatures = o.check?.signatures ?? {};
  const recorded = new Map<string, { res?: FetchResult; error?: unknown }>();
  const inner = o.catalogFetcher ?? o.fetcher;
  let replay = first;
  // Records every document the source reads, so each one's stages can be shown; never closed by the source.
  const fetcher: CardFetcher = {
    async fetch(u, init) {
      try {
        let res: FetchResult;
        if (replay !== undefined && replay.url === u) {
          res = replay.res;
          replay = undefined;
        } else res = await inner.fetch(u, { ...init, ...(o.signal && { signal: o.signal }) });
        recorded.set(u, { res });
        return res;
      } catch (err) {
        recorded.set(u, { error: err });
        throw err;
      }
    },
    close: async () => undefined,
  };
  const result = emptyReport(url);
  let source: AiCatalogSource;
  try {
    source = aiCatalogSource({ id: 'probe', catalogs: [url], fetcher, hostPolicy: o.policy, signatures, maxDepth: o.maxDepth ?? DEFAULT_MAX_DEPTH, maxEntries: WALK_ENTRIES });
  } catch (err) {
    const problems = isDiscoveryError(err) && err.problems.length > 0 ? [...err.problems] : [{ path: '$', message: err instanceof Error ? err.message : String(err) }];
    result.documents.push(failedDocument(url, 'source', problems.map((p) => ({ path: '$', message: p.message }))));
    return finish(result);
  }
  let records: readonly EndpointRecord[];
  let sourceProblems: readonly Problem[];
  let reports: readonly SourceCatalogReport[];
  const inlineCards = new Map<string, Buffer>();
  let rootError: unknown;
  try {
    const state = await source.refresh();
    records = state.records;
    sourceProblems = state.problems ?? [];
    reports = source.catalogs();
    rootError = state.ok ? undefined : state.error;
    for (const r of records) {
      if (!r.baseUrl.includes('#card=')) continue;
      const card = source.artifacts.inline(o.policy.normalizeEndpoint(r.baseUrl));
      if (card !== undefined) inlineCards.set(r.baseUrl, card.bytes);
    }
  } finally {
    await source.close();
  }

  // The documents, root first, as the source read them.
  const docs = new Map<string, Doc>();
  for (const r of reports) {
    const doc = await documentOf(r, recorded, docs, signatures);
    docs.set(r.url, doc);
    result.documents.push(doc.report);
  }
  if (reports.length === 0 && rootError !== undefined) {
    // The root was refused before any request (the allowlist): the source kept no report of it.
    const e = toDiscoveryError(rootError, 'ERR_FETCH_NETWORK');
    const stage: CatalogStage = e.failure === 'policy' && e.stage !== 'address' ? 'source' : e.stage === 'address' ? 'address' : 'fetch';
    result.documents.push(failedDocument(url, stage, [{ path: '$', message: e.message }]));
  }

  // Every entry, in the order the source walks them (nested catalogs at their entry).
  const walked: Walked[] = [];
  const byVia = new Map(reports.map((r) => [r.via, r] as const));
  const visit = (doc: Doc) => {
    if (doc.catalog === undefined) return;
    for (const e of doc.catalog.entries) {
      const w = walk(e, doc.report, walked);
      if (w === undefined) continue;
      if (e.type !== AI_CATALOG_MEDIA_TYPE) continue;
      const child = byVia.get(w.where);
      if (child !== undefined) {
        w.report.nested = { followed: child.outcome !== 'failed', url: child.url, ...(child.error !== undefined && { reason: child.error }) };
        visit(docs.get(child.url)!);
      } else w.report.nested = { followed: false };
    }
  };
  const root = result.documents[0];
  if (root !== undefined && docs.has(root.url)) visit(docs.get(root.url)!);

  // Attach what the source said to the entry it is about; the rest is the catalog's.
  const attached = new Set<Problem>();
  for (const w of walked) {
    for (const p of sourceProblems) {
      if (p.path !== w.where && !p.path.startsWith(`${w.where}.`)) continue;
      attached.add(p);
      // Trust Manifest notes and refusals are the entry's trust verdict, shown there.
      if (!p.path.startsWith(`${w.where}.trustManifest`)) w.report.problems.push(p);
    }
    const n = w.report.nested;
    if (n !== undefined && !n.followed && n.reason === undefined) {
      n.reason = w.report.problems[0]?.message ?? 'listed earlier in the tree: its entries are already read';
      if (w.report.problems.length === 0) n.followed = true;
    }
  }
  // The root's failure is its document's report, not a second problem.
  const rootUnusable = root === undefined || !root.usable;
  const rootUrl = hrefOf(url);
  result.problems = sourceProblems.filter((p) => !attached.has(p) && !(rootUnusable && hrefOf(p.path) === rootUrl));

  const work: CardWork[] = [];
  for await (const { w, verdict } of judgeChosen(walked, signatures, o.now?.() ?? Date.now())) {
    const { entry: e, report } = w;
    const record = records.find((r) => r.metadata?.['catalog'] === report.catalog && r.metadata?.['entry'] === e.path);
    if (record === undefined) {
      report.verdict = 'refused';
      continue;
    }
    report.endpoint = record.baseUrl;
    const pin = verdict.kind === 'pinned' ? verdict.pin.sha256 : undefined;
    const inline = inlineCards.get(record.baseUrl);
    work.push({
      walked: w,
      ...(pin !== undefined && { pin }),
      probe: () =>
        e.data === undefined
          ? probeEndpoint(record.baseUrl, o)
          : inline === undefined
            ? Promise.resolve(refusedReport(record.baseUrl, 'source', { path: '$', message: 'the source published no inline card for this entry' }, o.interfacePolicy !== undefined))
            : probeCard(record.baseUrl, inline, { ...content(o), sourceUrl: record.baseUrl }),
    });
  }
  await probeCards(work, o);
  result.entries = walked.map((w) => w.report);
  return finish(result);
}

/**
 * Probes an AI Catalog in hand (a file, a pasted document): the document stages, then every
 * entry. Nothing is served: `url` entries are probed as card URLs under `o.policy` (a relative
 * URL has nothing to resolve against and is refused), `data` entries are checked as cards, and
 * nested catalogs are followed when inline (within `maxDepth`) and listed, not fetched, when given
 * by URL. Never throws for bad input.
 *
 * @example
 * const r = await probeAiCatalogDocument(await readFile('ai-catalog.json'), { label: 'ai-catalog.json', policy, fetcher });
 */
export async function probeAiCatalogDocument(body: Uint8Array | string, o: ProbeAiCatalogOptions): Promise<AiCatalogReport> {
  const label = o.label ?? 'the pasted catalog';
  const signatures = o.check?.signatures ?? {};
  const maxDepth = o.maxDepth ?? DEFAULT_MAX_DEPTH;
  const result = emptyReport(label);
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const root = await readDocument({ url: label, via: 'root', depth: 1, origin: 'file', bytes: bytes.byteLength, rawSha256: sha256Hex(bytes) }, readAiCatalog(bytes), signatures);
  result.documents.push(root.report);

  const walked: Walked[] = [];
  let byUrl = false;
  const visit = async (doc: Doc) => {
    if (doc.catalog === undefined) return;
    for (const e of doc.catalog.entries) {
      const w = walk(e, doc.report, walked);
      if (w === undefined || e.type !== AI_CATALOG_MEDIA_TYPE) continue;
      if (e.data === undefined) {
        byUrl = true;
        w.report.nested = { followed: false, reason: 'given by URL: a catalog in hand is read alone; probe that URL to follow it' };
      } else if (doc.report.depth >= maxDepth) {
        w.report.problems.push({ path: w.where, message: `a nested catalog deeper than maxDepth=${maxDepth}; not followed` });
        w.report.nested = { followed: false, reason: `deeper than maxDepth=${maxDepth}` };
      } else {
        const read = readAiCatalogValue(e.data);
        if (!read.ok) {
          const shown = read.problems.slice(0, 3).map((p) => `${p.path}: ${p.message}`).join('; ');
          w.report.problems.push({ path: `${w.where}.data`, message: `the inline catalog is not usable: ${shown}` });
          w.report.nested = { followed: false, reason: 'the inline catalog is not usable' };
          continue;
        }
        const child = await readDocument({ url: `${doc.report.url}#${e.path}`, via: w.where, depth: doc.report.depth + 1, origin: 'inline' }, read, signatures);
        result.documents.push(child.report);
        w.report.nested = { followed: true, url: child.report.url };
        await visit(child);
      }
    }
  };
  await visit(root);
  if (byUrl) result.notes.push('nested catalogs given by URL are listed, not fetched, when the catalog is read from a file or pasted');

  const work: CardWork[] = [];
  for await (const { w, verdict } of judgeChosen(walked, signatures, o.now?.() ?? Date.now())) {
    const { entry: e, report } = w;
    if (verdict.kind === 'refused') {
      report.verdict = 'refused';
      continue;
    }
    const pin = verdict.kind === 'pinned' ? verdict.pin.sha256 : undefined;
    if (e.data !== undefined) {
      if (typeof e.data !== 'object' || e.data === null || Array.isArray(e.data)) {
        report.problems.push({ path: `${w.where}.data`, message: `an inline A2A card must be a JSON object, got ${describe(e.data)}; skipped` });
        report.verdict = 'refused';
        continue;
      }
      let cardBytes: Buffer;
      try {
        cardBytes = Buffer.from(canonicalJson(e.data), 'utf8');
      } catch (err) {
        // A value RFC 8785 cannot write (a number such as 1e400): the card has no bytes to check.
        report.problems.push({ path: `${w.where}.data`, message: `the inline card has no RFC 8785 form (${err instanceof Error ? err.message : String(err)}); skipped` });
        report.verdict = 'refused';
        continue;
      }
      report.endpoint = `${report.catalog.split('#')[0]}#card=${e.identifier}`;
      work.push({ walked: w, ...(pin !== undefined && { pin }), probe: () => probeCard(report.endpoint!, cardBytes, content(o)) });
      continue;
    }
    let target: string;
    try {
      target = catalogCardUrl(e.url!);
    } catch {
      report.problems.push({ path: `${w.where}.url`, message: `${describe(e.url)} is not an absolute URL; a catalog in hand has no URL to resolve it against; skipped` });
      report.verdict = 'refused';
      continue;
    }
    report.endpoint = target;
    work.push({ walked: w, ...(pin !== undefined && { pin }), probe: () => probeEndpoint(target, o) });
  }
  await probeCards(work, o);
  result.entries = walked.map((w) => w.report);
  return finish(result);
}

/** A URL without its fragment, as the source names its roots (the text itself when it is not a URL). */
function hrefOf(text: string): string {
  try {
    const u = new URL(text);
    u.hash = '';
    return u.href;
  } catch {
    return text;
  }
}

function emptyReport(source: string): AiCatalogReport {
  return { kind: 'ai-catalog', source, accepted: false, documents: [], entries: [], problems: [], notes: [], counts: { entries: 0, cards: 0, accepted: 0, refused: 0, superseded: 0, ignored: 0, nested: 0, notProbed: 0 } };
}

function failedDocument(url: string, stage: CatalogStage, problems: Problem[], extra: Partial<AiCatalogDocumentReport> = {}): AiCatalogDocumentReport {
  return { url, via: 'root', depth: 1, usable: false, stage, origin: 'http', problems, warnings: [], entries: 0, cards: 0, nested: 0, ignored: 0, ...extra };
}

/** One document the source read: its stages rebuilt from the bytes it was given, its counts from the source's report. */
async function documentOf(r: SourceCatalogReport, recorded: Map<string, { res?: FetchResult; error?: unknown }>, docs: Map<string, Doc>, signatures: SignatureOptions): Promise<Doc> {
  const where = { via: r.via, depth: r.depth };
  const counts = { entries: r.entries, cards: r.cards, nested: r.nested, ignored: r.ignored };
  if (r.outcome === 'inline') {
    const cut = r.via.lastIndexOf(' ');
    const parent = docs.get(r.via.slice(0, cut))?.catalog?.entries.find((e) => e.path === r.via.slice(cut + 1));
    const doc = await readDocument({ url: r.url, ...where, origin: 'inline' }, readAiCatalogValue(parent?.data), signatures);
    Object.assign(doc.report, counts);
    return doc;
  }
  const rec = recorded.get(r.url);
  const res = rec?.res;
  if (res === undefined) {
    const e = rec === undefined ? undefined : toDiscoveryError(rec.error, 'ERR_FETCH_NETWORK');
    const stage: CatalogStage = e === undefined ? 'source' : e.stage === 'address' ? 'address' : 'fetch';
    return { report: failedDocument(r.url, stage, [{ path: '$', message: e?.message ?? r.error ?? 'not read' }], where) };
  }
  const http = { status: res.status, ...(res.headers['content-type'] !== undefined && { contentType: res.headers['content-type'] }) };
  if (res.status !== 200) return { report: failedDocument(r.url, 'fetch', [{ path: '$', message: r.error ?? `HTTP ${res.status}` }], { ...where, ...http }) };
  // The source's reading of the bytes (the same reader and limits); the body is already bounded by the fetcher.
  const read = readAiCatalog(res.body, { maxBytes: res.body.byteLength, maxEntries: WALK_ENTRIES });
  const doc = await readDocument({ url: r.url, ...where, origin: 'http', ...http, bytes: res.body.byteLength, rawSha256: sha256Hex(res.body) }, read, signatures, r.url);
  if (doc.report.usable) Object.assign(doc.report, counts);
  if (r.outcome === 'failed' && doc.report.usable) {
    // Refused for a reason the bytes alone do not show: say what the source said.
    Object.assign(doc.report, { usable: false, stage: 'fetch', problems: [{ path: '$', message: r.error ?? 'not read' }] });
    delete doc.catalog;
  }
  return doc;
}

/** A document's parse, schema and signature stages (signatures checked as the source checks them). */
async function readDocument(
  at: Pick<AiCatalogDocumentReport, 'url' | 'via' | 'depth' | 'origin' | 'status' | 'contentType' | 'bytes' | 'rawSha256'>,
  read: ReadCatalogResult,
  signatures: SignatureOptions,
  sigOrigin?: string,
): Promise<Doc> {
  const { origin } = at;
  const report: AiCatalogDocumentReport = { ...at, usable: false, stage: 'parse', problems: [], warnings: [], entries: 0, cards: 0, nested: 0, ignored: 0 };
  if (!read.ok) {
    report.stage = read.code === 'ERR_CARD_INVALID' ? 'schema' : 'parse';
    report.problems = [...read.problems];
    return { report };
  }
  const c = read.catalog;
  report.specVersion = c.specVersion;
  if (c.host !== undefined) report.host = { ...c.host };
  report.warnings = [...read.warnings];
  Object.assign(report, countEntries(c));
  if (origin !== 'inline') {
    const sig: SignatureResult = await verifyDetachedSignature(c.raw, { ...signatures, ...(sigOrigin !== undefined && { origin: sigOrigin }) });
    report.signature = { status: sig.status, ok: sig.ok, ...(sig.kid !== undefined && { kid: sig.kid }), ...(sig.form !== undefined && { form: sig.form }) };
    if (!sig.ok) {
      report.stage = 'signature';
      report.problems = sig.problems.length > 0 ? [...sig.problems] : [{ path: 'signature', message: 'the catalog is not signed, and signatures are required for it' }];
      return { report };
    }
    report.warnings.push(...sig.problems);
  }
  report.usable = true;
  report.stage = 'selected';
  return { report, catalog: c };
}

function countEntries(c: AiCatalog): Pick<AiCatalogDocumentReport, 'entries' | 'cards' | 'nested' | 'ignored'> {
  const cards = c.entries.filter((e) => e.type === A2A_CARD_MEDIA_TYPE).length;
  const nested = c.entries.filter((e) => e.type === AI_CATALOG_MEDIA_TYPE).length;
  return { entries: c.entries.length, cards, nested, ignored: c.entries.length - cards - nested };
}

/** Adds an entry to the walk; past the source's walk bound it is listed as not read (and undefined returned). */
function walk(e: AiCatalogEntry, doc: AiCatalogDocumentReport, walked: Walked[]): Walked | undefined {
  const where = `${doc.url} ${e.path}`;
  const kind = e.type === A2A_CARD_MEDIA_TYPE ? 'card' : e.type === AI_CATALOG_MEDIA_TYPE ? 'nested' : 'ignored';
  const report: AiCatalogEntryReport = {
    catalog: doc.url,
    path: e.path,
    depth: doc.depth,
    identifier: e.identifier,
    type: e.type,
    ...(e.url !== undefined && { url: e.url }),
    ...(e.data !== undefined && { inline: true }),
    ...(e.displayName !== undefined && { displayName: e.displayName }),
    ...(e.version !== undefined && { version: e.version }),
    ...(e.updatedAt !== undefined && { updatedAt: e.updatedAt }),
    verdict: kind === 'card' ? 'not-probed' : kind === 'nested' ? 'nested' : 'ignored',
    problems: [],
  };
  const w: Walked = { entry: e, report, where };
  walked.push(w);
  if (walked.length > WALK_ENTRIES) {
    report.verdict = kind === 'card' ? 'not-probed' : report.verdict;
    report.skipped = `not read: the catalogs list more than ${WALK_ENTRIES} entries in all`;
    return undefined;
  }
  return w;
}

/**
 * The version decision of every A2A card entry (the library's {@link selectVersions}, in walk
 * order); returns the chosen ones.
 */
function decideVersions(walked: readonly Walked[]): Walked[] {
  const cards = walked.filter((w) => w.entry.type === A2A_CARD_MEDIA_TYPE && w.report.skipped === undefined);
  const candidates = cards.map((w) => ({ identifier: w.entry.identifier, version: w.entry.version, updatedAtMs: w.entry.updatedAtMs, where: w.where, w }));
  const { chosen, problems } = selectVersions(candidates);
  const chosenBy = new Map(chosen.map((c) => [c.identifier, c.w] as const));
  for (const w of cards) {
    const group = cards.filter((x) => x.entry.identifier === w.entry.identifier);
    const winner = chosenBy.get(w.entry.identifier);
    const duplicate = problems.find((p) => p.path === w.where);
    if (duplicate !== undefined) {
      const firstOf = group.find((x) => x.entry.version === w.entry.version)!;
      w.report.selection = { decision: 'duplicate', reason: 'repeats an identifier and version listed earlier; identifier and version must be unique in a catalog, so it is skipped', instead: firstOf.where };
      if (!w.report.problems.some((p) => p.path === duplicate.path)) w.report.problems.push(duplicate);
      w.report.verdict = 'refused';
    } else if (winner === w) {
      const versions = group.filter((x) => !problems.some((p) => p.path === x.where));
      w.report.selection = versions.length === 1 ? { decision: 'only', reason: 'the only version listed' } : { decision: 'chosen', reason: chosenReason(w, versions) };
    } else {
      w.report.selection = { decision: 'superseded', reason: `version ${w.entry.version ?? '(none)'} is not the newest; ${winner?.entry.version ?? 'another entry'} is proposed instead`, instead: winner?.where ?? '' };
      w.report.verdict = 'superseded';
    }
  }
  return chosen.map((c) => c.w);
}

/** Why the chosen version won, in the terms {@link selectVersions} uses. */
function chosenReason(w: Walked, versions: readonly Walked[]): string {
  const others = versions.filter((x) => x !== w).map((x) => x.entry.version ?? '(none)');
  const basis = versions.every((x) => isSemanticVersion(x.entry.version))
    ? 'the newest semantic version'
    : versions.every((x) => x.entry.updatedAtMs !== undefined)
      ? 'the latest updatedAt'
      : 'semantic versions above the others, then the latest updatedAt, then the first listed';
  return `${basis}, over ${others.join(', ')}`;
}

/** The entries {@link decideVersions} chooses, each with its Trust Manifest verdict (also shown on its report). */
async function* judgeChosen(walked: readonly Walked[], signatures: SignatureOptions, now: number): AsyncGenerator<{ w: Walked; verdict: ManifestVerdict }> {
  for (const w of decideVersions(walked)) {
    const verdict = await judgeTrustManifest(w.entry, { signatures, now, catalogUrl: w.report.catalog });
    w.report.trust = trustOf(verdict);
    yield { w, verdict };
  }
}

function trustOf(v: ManifestVerdict): NonNullable<AiCatalogEntryReport['trust']> {
  switch (v.kind) {
    case 'pinned':
      return { verdict: 'pinned', sha256: v.pin.sha256, identity: v.pin.identity, kid: v.pin.kid };
    case 'refused':
      return { verdict: 'refused', reason: v.problem };
    case 'unverified':
      return { verdict: 'unverified', reason: v.note };
    default:
      return { verdict: 'none', ...(v.note !== undefined && { reason: v.note }) };
  }
}

function content(o: ProbeAiCatalogOptions): { interfacePolicy?: ProbeAiCatalogOptions['interfacePolicy']; check?: ProbeAiCatalogOptions['check'] } {
  return { ...(o.interfacePolicy && { interfacePolicy: o.interfacePolicy }), ...(o.check && { check: o.check }) };
}

/**
 * Probes the chosen cards: at most `maxEntries`, `concurrency` at a time, one probe per endpoint
 * (two entries naming one card share its report); a pinned card whose bytes differ is refused
 * at `signature`, as the card cache refuses it.
 */
async function probeCards(work: readonly CardWork[], o: ProbeAiCatalogOptions): Promise<void> {
  const maxEntries = o.maxEntries ?? DEFAULT_PROBE_ENTRIES;
  for (const item of work.slice(maxEntries)) item.walked.report.skipped = `not probed: the probe reads the first ${maxEntries} cards of a catalog`;
  const queue = work.slice(0, maxEntries);
  const byEndpoint = new Map<string, Promise<ProbeReport>>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < queue.length) {
      const { walked, pin, probe } = queue[next++]!;
      const { report } = walked;
      if (o.signal?.aborted) {
        report.skipped = `not probed: ${o.signal.reason instanceof Error ? o.signal.reason.message : String(o.signal.reason ?? 'aborted')}`;
        continue;
      }
      const key = report.endpoint!;
      let pending = byEndpoint.get(key);
      if (pending === undefined) byEndpoint.set(key, (pending = probe()));
      const card = structuredClone(await pending);
      if (pin !== undefined && card.rawSha256 !== undefined) {
        report.trust!.matches = card.rawSha256 === pin;
        if (!report.trust!.matches && card.accepted) {
          Object.assign(card, { accepted: false, stage: 'signature', problems: [{ path: '$', message: `SHA-256 ${card.rawSha256} differs from the ${pin} its publisher pinned in the Trust Manifest (${walked.where}.trustManifest); the card is refused` }] });
        }
      }
      report.report = card;
      report.verdict = card.accepted ? 'accepted' : 'refused';
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency ?? DEFAULT_PROBE_CONCURRENCY, queue.length)) }, worker));
}

function finish(r: AiCatalogReport): AiCatalogReport {
  const c = r.counts;
  for (const e of r.entries) {
    c.entries++;
    if (e.type === A2A_CARD_MEDIA_TYPE) c.cards++;
    if (e.verdict === 'accepted') c.accepted++;
    else if (e.verdict === 'refused') c.refused++;
    else if (e.verdict === 'superseded') c.superseded++;
    else if (e.verdict === 'ignored') c.ignored++;
    else if (e.verdict === 'nested') c.nested++;
    else c.notProbed++;
  }
  r.accepted = r.documents.length > 0 && r.documents.every((d) => d.usable) && r.problems.length === 0 && r.entries.every((e) => e.verdict !== 'refused' && e.problems.length === 0);
  return r;
}
