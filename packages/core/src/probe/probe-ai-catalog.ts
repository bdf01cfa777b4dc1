/**
 * Probing an AI Catalog (`application/ai-catalog+json`): what discovery would decide about every
 * entry. At a URL, a real {@link aiCatalogSource} reads the catalog tree (allowlist, fetch bounds,
 * catalog signature, nesting depth, cycles, versions, Trust Manifests) and its records, problems
 * and catalog reports are the decisions; each proposed card is then probed like one URL
 * ({@link probeEndpoint}) or, carried inline, checked like one card ({@link probeCard}). A
 * catalog in hand (a file, a pasted document) is read with the same reader and the same version
 * and Trust Manifest rules; its `url` entries are probed as card URLs, its `data` entries checked
 * as cards, and nothing is served.
 *
 * The documents' stages are rebuilt in ai-catalog-documents.ts, the entries walked, decided and
 * probed in ai-catalog-entries.ts.
 */
import { canonicalJson, sha256Hex } from '../card/index.js';
import { A2A_CARD_MEDIA_TYPE, AI_CATALOG_MEDIA_TYPE } from '../catalog/index.js';
import { readAiCatalogPaced, readAiCatalogValuePaced } from '../catalog/ai-catalog.js';
import { Pacer } from '../catalog/paced.js';
import type { Problem } from '../errors.js';
import { isDiscoveryError, toDiscoveryError } from '../errors.js';
import type { CardFetcher, FetchResult } from '../fetch/index.js';
import { catalogCardUrl } from '../fetch/index.js';
import type { AiCatalogSource, EndpointRecord, CatalogReport as SourceCatalogReport } from '../sources/index.js';
import { aiCatalogSource } from '../sources/index.js';
import { CATALOG_DEFAULTS } from '../rules/defaults.js';
import { systemClock } from '../clock/index.js';
import type { Lookalike } from '../rules/lookalike.js';
import { identifierName } from '../rules/lookalike.js';
import { flagLookalikes } from './probe-lookalikes.js';
import { describe } from '../text.js';
import type { Doc } from './ai-catalog-documents.js';
import { documentOf, failedDocument, readDocument } from './ai-catalog-documents.js';
import type { CardWork, Walked } from './ai-catalog-entries.js';
import { judgeChosen, omittedNote, probeCards, walk } from './ai-catalog-entries.js';
import type { AiCatalogReport, CatalogStage } from './ai-catalog-report.js';
import type { ProbeEndpointOptions } from './probe-endpoint.js';
import { probeCard, probeEndpoint } from './probe-endpoint.js';
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
  /**
   * Entries read in all, every document together (the walk's bound); later ones are not listed and
   * the report says so in `truncated`. Default 5,000, as the source (`catalog.maxEntries`).
   */
  maxEntriesRead?: number;
  /**
   * Catalog documents fetched at most, the root and nested ones together (the source's
   * `maxCatalogs`); later ones are not requested and the report says so in `truncated`. Default 50, as the source.
   */
  maxDocuments?: number;
  /** Wall clock (epoch ms) for Trust Manifest expiry. Default `Date.now`. */
  now?: () => number;
}

/**
 * True when a response or a document is an AI Catalog: its content type is
 * `application/ai-catalog+json`, or it is a JSON object with `specVersion` and `entries`, or with an
 * `entries` array (a catalog that lacks `specVersion` is read as one and told so).
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
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  // An `entries` array is a catalog's, never an agent card's: a catalog that lacks `specVersion`
  // is still read as a catalog, and told that it lacks it (not refused as a card without a name).
  return ('specVersion' in value && 'entries' in value) || Array.isArray((value as { entries?: unknown }).entries);
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
  const maxRead = o.maxEntriesRead ?? CATALOG_DEFAULTS.maxEntries;
  const maxDocuments = o.maxDocuments ?? CATALOG_DEFAULTS.maxCatalogs;
  const pacer = new Pacer();
  let source: AiCatalogSource;
  try {
    source = aiCatalogSource({ id: 'probe', catalogs: [url], fetcher, hostPolicy: o.policy, signatures, maxDepth: o.maxDepth ?? CATALOG_DEFAULTS.maxDepth, maxEntries: maxRead, maxCatalogs: maxDocuments });
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
    await pacer.tick();
    const doc = await documentOf(r, recorded, docs, signatures, pacer);
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
  const walked: Walked[] & { omitted?: number } = [];
  const byVia = new Map(reports.map((r) => [r.via, r] as const));
  const visit = async (doc: Doc): Promise<void> => {
    if (doc.catalog === undefined) return;
    for (const e of doc.catalog.entries) {
      await pacer.tick();
      const w = walk(e, doc.report, walked, maxRead);
      if (w === undefined) continue;
      if (e.type !== AI_CATALOG_MEDIA_TYPE) continue;
      const child = byVia.get(w.where);
      if (child !== undefined) {
        w.report.nested = { followed: child.outcome !== 'failed', url: child.url, ...(child.error !== undefined && { reason: child.error }) };
        await visit(docs.get(child.url)!);
      } else w.report.nested = { followed: false };
    }
  };
  const root = result.documents[0];
  if (root !== undefined && docs.has(root.url)) await visit(docs.get(root.url)!);
  if (walked.omitted !== undefined) result.truncated = [omittedNote(walked.omitted, maxRead)];
  const unread = sourceProblems.filter((p) => p.message.includes(`maxCatalogs=${maxDocuments} `)).length;
  if (unread > 0) (result.truncated ??= []).push(`${unread} catalog document${unread === 1 ? ' is' : 's are'} not read: at most ${maxDocuments} are fetched in one probe`);

  // Attach what the source said to the entry it is about; the rest is the catalog's.
  const attached = new Set<Problem>();
  // Entries by where they are, so each problem finds its entry at once (linear in entries + problems).
  const byWhere = new Map<string, Walked[]>();
  for (const w of walked) {
    await pacer.tick();
    const same = byWhere.get(w.where);
    if (same === undefined) byWhere.set(w.where, [w]);
    else same.push(w);
  }
  for (const p of sourceProblems) {
    await pacer.tick();
    for (const w of entriesAt(p.path, byWhere)) {
      attached.add(p);
      // Trust Manifest notes and refusals are the entry's trust verdict, shown there.
      if (!p.path.startsWith(`${w.where}.trustManifest`)) w.report.problems.push(p);
    }
  }
  for (const w of walked) {
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

  const recordAt = new Map<string, EndpointRecord>();
  for (const r of records) {
    await pacer.tick();
    const key = JSON.stringify([r.metadata?.['catalog'], r.metadata?.['entry']]);
    if (!recordAt.has(key)) recordAt.set(key, r);
  }
  const work: CardWork[] = [];
  for await (const { w, verdict } of judgeChosen(walked, signatures, o.now?.() ?? systemClock.wallNow(), pacer)) {
    const { entry: e, report } = w;
    const record = recordAt.get(JSON.stringify([report.catalog, e.path]));
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
  const maxDepth = o.maxDepth ?? CATALOG_DEFAULTS.maxDepth;
  const result = emptyReport(label);
  const maxRead = o.maxEntriesRead ?? CATALOG_DEFAULTS.maxEntries;
  const pacer = new Pacer();
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const root = await readDocument({ url: label, via: 'root', depth: 1, origin: 'file', bytes: bytes.byteLength, rawSha256: sha256Hex(bytes) }, await readAiCatalogPaced(bytes, {}, pacer), signatures, pacer);
  result.documents.push(root.report);

  const walked: Walked[] & { omitted?: number } = [];
  let byUrl = false;
  const visit = async (doc: Doc) => {
    if (doc.catalog === undefined) return;
    for (const e of doc.catalog.entries) {
      await pacer.tick();
      const w = walk(e, doc.report, walked, maxRead);
      if (w === undefined || e.type !== AI_CATALOG_MEDIA_TYPE) continue;
      if (e.data === undefined) {
        byUrl = true;
        w.report.nested = { followed: false, reason: 'given by URL: a catalog in hand is read alone; probe that URL to follow it' };
      } else if (doc.report.depth >= maxDepth) {
        w.report.problems.push({ path: w.where, message: `a nested catalog deeper than maxDepth=${maxDepth}; not followed` });
        w.report.nested = { followed: false, reason: `deeper than maxDepth=${maxDepth}` };
      } else {
        const read = await readAiCatalogValuePaced(e.data, {}, pacer);
        if (!read.ok) {
          const shown = read.problems.slice(0, 3).map((p) => `${p.path}: ${p.message}`).join('; ');
          w.report.problems.push({ path: `${w.where}.data`, message: `the inline catalog is not usable: ${shown}` });
          w.report.nested = { followed: false, reason: 'the inline catalog is not usable' };
          continue;
        }
        const child = await readDocument({ url: `${doc.report.url}#${e.path}`, via: w.where, depth: doc.report.depth + 1, origin: 'inline' }, read, signatures, pacer);
        result.documents.push(child.report);
        w.report.nested = { followed: true, url: child.report.url };
        await visit(child);
      }
    }
  };
  await visit(root);
  if (walked.omitted !== undefined) result.truncated = [omittedNote(walked.omitted, maxRead)];
  if (byUrl) result.notes.push('nested catalogs given by URL are listed, not fetched, when the catalog is read from a file or pasted');

  const work: CardWork[] = [];
  for await (const { w, verdict } of judgeChosen(walked, signatures, o.now?.() ?? systemClock.wallNow(), pacer)) {
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

/**
 * The entries a problem of the source is about: the one at its path, or at a prefix of it ending
 * before a `.` (`<catalog> entries[3].trustManifest` is about `<catalog> entries[3]`).
 */
function entriesAt(path: string, byWhere: ReadonlyMap<string, readonly Walked[]>): Walked[] {
  const found: Walked[] = [...(byWhere.get(path) ?? [])];
  for (let i = path.indexOf('.', path.lastIndexOf(' ') + 1); i !== -1; i = path.indexOf('.', i + 1)) found.push(...(byWhere.get(path.slice(0, i)) ?? []));
  return found;
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

function content(o: ProbeAiCatalogOptions): Pick<ProbeAiCatalogOptions, 'interfacePolicy' | 'check' | 'credentials'> {
  return { ...(o.interfacePolicy && { interfacePolicy: o.interfacePolicy }), ...(o.check && { check: o.check }), ...(o.credentials !== undefined && { credentials: o.credentials }) };
}

function finish(r: AiCatalogReport): AiCatalogReport {
  // Flagged, not refused: a lookalike does not change whether the catalog is accepted.
  flagLookalikes(
    r.entries
      .filter((e) => e.verdict === 'accepted')
      .map((e) => ({ url: e.endpoint ?? e.url, names: [e.report?.name, e.displayName, identifierName(e.identifier)], flag: (l: Lookalike) => (e.lookalike = l) })),
  );
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
