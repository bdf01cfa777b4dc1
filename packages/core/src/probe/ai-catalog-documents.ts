/**
 * The documents of an AI Catalog probe, stage by stage: a document the source read rebuilt from
 * the response it was given (fetch, parse, schema, signature, as the source checks them), an
 * inline nested catalog read from its parent's entry, a catalog in hand read from its bytes; each
 * with its entry counts.
 *
 * @module
 */
import type { SignatureOptions, SignatureResult } from '../card/index.js';
import { sha256Hex, verifyDetachedSignature } from '../card/index.js';
import type { AiCatalog, ReadCatalogResult } from '../catalog/index.js';
import { A2A_CARD_MEDIA_TYPE, AI_CATALOG_MEDIA_TYPE } from '../catalog/index.js';
import { readAiCatalogPaced, readAiCatalogValuePaced } from '../catalog/ai-catalog.js';
import type { Pacer } from '../catalog/paced.js';
import { pacedCanonicalJson } from '../catalog/paced.js';
import type { Problem } from '../errors.js';
import { toDiscoveryError } from '../errors.js';
import type { FetchResult } from '../fetch/index.js';
import { CATALOG_DEFAULTS } from '../rules/defaults.js';
import type { CatalogReport as SourceCatalogReport } from '../sources/index.js';
import type { AiCatalogDocumentReport, CatalogStage } from './ai-catalog-report.js';

/** A document as read for the report, with its parsed catalog when usable. */
export interface Doc {
  report: AiCatalogDocumentReport;
  catalog?: AiCatalog;
}

/** A document that could not be read, with why. */
export function failedDocument(url: string, stage: CatalogStage, problems: Problem[], extra: Partial<AiCatalogDocumentReport> = {}): AiCatalogDocumentReport {
  return { url, via: 'root', depth: 1, usable: false, stage, origin: 'http', problems, warnings: [], entries: 0, cards: 0, nested: 0, ignored: 0, ...extra };
}

/** One document the source read: its stages rebuilt from the bytes it was given, its counts from the source's report. */
export async function documentOf(r: SourceCatalogReport, recorded: Map<string, { res?: FetchResult; error?: unknown }>, docs: Map<string, Doc>, signatures: SignatureOptions, pacer: Pacer): Promise<Doc> {
  const where = { via: r.via, depth: r.depth };
  const counts = { entries: r.entries, cards: r.cards, nested: r.nested, ignored: r.ignored };
  if (r.outcome === 'inline') {
    const cut = r.via.lastIndexOf(' ');
    const parent = docs.get(r.via.slice(0, cut))?.catalog?.entries.find((e) => e.path === r.via.slice(cut + 1));
    const doc = await readDocument({ url: r.url, ...where, origin: 'inline' }, await readAiCatalogValuePaced(parent?.data, {}, pacer), signatures, pacer);
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
  const read = await readAiCatalogPaced(res.body, { maxBytes: res.body.byteLength, maxEntries: CATALOG_DEFAULTS.maxEntries }, pacer);
  const doc = await readDocument({ url: r.url, ...where, origin: 'http', ...http, bytes: res.body.byteLength, rawSha256: sha256Hex(res.body) }, read, signatures, pacer, r.url);
  if (doc.report.usable) Object.assign(doc.report, counts);
  if (r.outcome === 'failed' && doc.report.usable) {
    // Refused for a reason the bytes alone do not show: say what the source said.
    Object.assign(doc.report, { usable: false, stage: 'fetch', problems: [{ path: '$', message: r.error ?? 'not read' }] });
    delete doc.catalog;
  }
  return doc;
}

/** A document's parse, schema and signature stages (signatures checked as the source checks them). */
export async function readDocument(
  at: Pick<AiCatalogDocumentReport, 'url' | 'via' | 'depth' | 'origin' | 'status' | 'contentType' | 'bytes' | 'rawSha256'>,
  read: ReadCatalogResult,
  signatures: SignatureOptions,
  pacer: Pacer,
  sigOrigin?: string,
): Promise<Doc> {
  const { origin } = at;
  const report: AiCatalogDocumentReport = { ...at, usable: false, stage: 'parse', problems: [], warnings: [], entries: 0, cards: 0, nested: 0, ignored: 0 };
  if (!read.ok) {
    report.stage = read.code === 'ERR_CARD_INVALID' ? 'schema' : 'parse';
    report.problems = listed(read.problems);
    return { report };
  }
  const c = read.catalog;
  report.specVersion = c.specVersion;
  if (c.host !== undefined) report.host = { ...c.host };
  report.warnings = listed(read.warnings);
  Object.assign(report, countEntries(c));
  if (origin !== 'inline') {
    const sig: SignatureResult = await verifyDetachedSignature(c.raw, { ...signatures, ...(sigOrigin !== undefined && { origin: sigOrigin }) }, (value) => pacedCanonicalJson(value, pacer));
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

/** Problems and warnings listed per document: a catalog with thousands of bad entries is summarized (as the source summarizes its problems), so a report stays bounded. */
const MAX_LISTED = 100;

/** At most {@link MAX_LISTED} of `list`, the last one saying how many more there were. */
function listed(list: readonly Problem[]): Problem[] {
  if (list.length <= MAX_LISTED) return [...list];
  const more = list.length - (MAX_LISTED - 1);
  return [...list.slice(0, MAX_LISTED - 1), { path: list[MAX_LISTED - 1]!.path, message: `and ${more} more (only the first ${MAX_LISTED - 1} are listed)` }];
}

function countEntries(c: AiCatalog): Pick<AiCatalogDocumentReport, 'entries' | 'cards' | 'nested' | 'ignored'> {
  const cards = c.entries.filter((e) => e.type === A2A_CARD_MEDIA_TYPE).length;
  const nested = c.entries.filter((e) => e.type === AI_CATALOG_MEDIA_TYPE).length;
  return { entries: c.entries.length, cards, nested, ignored: c.entries.length - cards - nested };
}
