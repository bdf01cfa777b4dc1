/**
 * The probe report of an AI Catalog (`application/ai-catalog+json`): the document stages of each
 * catalog read (fetch, parse, schema, signature), then every entry with what discovery decides
 * about it (type, version, Trust Manifest) and, for each A2A card entry probed, the card's own
 * stage-by-stage {@link ProbeReport}. Built by {@link probeAiCatalogUrl} and
 * {@link probeAiCatalogDocument}; printed by {@link renderAiCatalogProbe}.
 */
import type { Problem } from '../errors.js';
import type { Lookalike } from '../rules/lookalike.js';
import type { CatalogFoundBy, CatalogLinkRel } from '../sources/index.js';
import { describeWay } from '../sources/catalog-announcements.js';
import type { ProbeReport } from './probe-report.js';
import { renderProbe, stageMarks } from './probe-report.js';

/** Document stages in the order they run; `selected` means the document is usable. */
export type CatalogStage = 'source' | 'address' | 'fetch' | 'parse' | 'schema' | 'signature' | 'selected';

/** One catalog document read (the root, a nested one by URL, or one nested inline). */
export interface AiCatalogDocumentReport {
  /** The document's URL (a file's path for a file); an inline nested catalog is `<parent URL>#entries[i]`. */
  url: string;
  /** `root`, or where it is listed: `<parent URL> entries[i]`. */
  via: string;
  /** The root is depth 1. */
  depth: number;
  /** True when discovery reads its entries; otherwise `stage` is the first refusing stage. */
  usable: boolean;
  stage: CatalogStage;
  /** `http` (read at its URL), `inline` (nested as `data`) or `file` (read from a file or pasted). */
  origin: 'http' | 'inline' | 'file';
  /** HTTP status and content type, when fetched. */
  status?: number;
  contentType?: string;
  bytes?: number;
  rawSha256?: string;
  specVersion?: string;
  /** The catalog's own `host` (third-party text). */
  host?: { displayName?: string; identifier?: string };
  /** The catalog's detached signature, judged against the trust store. */
  signature?: { status: string; ok: boolean; kid?: string; form?: string };
  /** What refuses the document, each with its JSON path in the document. */
  problems: Problem[];
  /** What does not refuse it (an entry's dropped member, a signature by an unknown key). */
  warnings: Problem[];
  /** Entries listed, A2A cards among them, nested catalogs, entries of other types (ignored). */
  entries: number;
  cards: number;
  nested: number;
  ignored: number;
}

/**
 * What discovery decides about one entry:
 * - `accepted` / `refused`: an A2A card entry proposed and probed (or refused before any card
 *   stage: its Trust Manifest, an unusable url, a repeated identifier and version);
 * - `superseded`: another version of the same identifier is proposed instead;
 * - `ignored`: an entry of another type (an MCP server, ...), never fetched;
 * - `nested`: a nested catalog, followed (its entries are listed under their own catalog) or not;
 * - `not-probed`: past the probe's bound, or the caller's deadline passed first.
 */
export type CatalogEntryVerdict = 'accepted' | 'refused' | 'superseded' | 'ignored' | 'nested' | 'not-probed';

/** One entry of one catalog document. */
export interface AiCatalogEntryReport {
  /** The document listing it ({@link AiCatalogDocumentReport.url}) and its JSON path there. */
  catalog: string;
  path: string;
  depth: number;
  identifier: string;
  type: string;
  /** The `url` as the entry gives it; `inline` when the entry carries its artifact as `data`. */
  url?: string;
  inline?: boolean;
  /** Third-party text, for display only. */
  displayName?: string;
  version?: string;
  updatedAt?: string;
  verdict: CatalogEntryVerdict;
  /** For A2A card entries: the version decision. */
  selection?: {
    /** `only`: the single entry of its identifier; `chosen` among several; `superseded`; `duplicate` (skipped). */
    decision: 'only' | 'chosen' | 'superseded' | 'duplicate';
    reason: string;
    /** The path (`<catalog> entries[i]`) of the entry chosen instead, for `superseded` and `duplicate`. */
    instead?: string;
  };
  /** For the chosen card entries: the Trust Manifest verdict, and whether the card's bytes match a pin. */
  trust?: {
    verdict: 'none' | 'unverified' | 'pinned' | 'refused';
    /** Why (a note for `none`/`unverified`, the refusal for `refused`), with its JSON path. */
    reason?: Problem;
    sha256?: string;
    identity?: string;
    kid?: string;
    /** `pinned` and the card was read: whether its bytes have the pinned SHA-256. */
    matches?: boolean;
  };
  /** For nested catalogs: whether it was followed, and which document it is. */
  nested?: { followed: boolean; url?: string; reason?: string };
  /** The endpoint discovery proposes for it (the card URL, or `<catalog URL>#card=<identifier>` inline). */
  endpoint?: string;
  /** What discovery says about this entry (JSON paths prefixed with the catalog). */
  problems: Problem[];
  /** The card's own stages, when it was probed. */
  report?: ProbeReport;
  /** Why a card entry was not probed. */
  skipped?: string;
  /** An accepted card entry whose name or identifier looks like an earlier entry's of another origin. */
  lookalike?: Lookalike;
}

/** The result of probing an AI Catalog. */
export interface AiCatalogReport {
  kind: 'ai-catalog';
  /** The catalog probed: its URL, a file's path, or `the pasted catalog`. */
  source: string;
  /**
   * True when every document is usable, no entry is refused and discovery reports no problem
   * about the catalog (a cycle, a nested catalog it could not read; superseded, ignored and not
   * probed entries do not count). The CLI exits 0 then, 1 otherwise.
   */
  accepted: boolean;
  /** Every document read, root first, in the order discovery reads them. */
  documents: AiCatalogDocumentReport[];
  /** Every entry of every usable document, in the order discovery reads them. */
  entries: AiCatalogEntryReport[];
  /** Problems discovery reports that belong to no single entry (a document bound, a root that could not be read). */
  problems: Problem[];
  /** Things said about the probe that decide nothing (what was not followed in a file). */
  notes: string[];
  counts: { entries: number; cards: number; accepted: number; refused: number; superseded: number; ignored: number; nested: number; notProbed: number };
  /**
   * For a site probed at its root (`https://host/`, no agent card there): how its catalog was
   * found — at the well-known URI, or announced by a `Link` header, an HTML `<link>` or a
   * robots.txt `Agentmap:` line (ARD §6.1) — and the URL whose response announced it.
   */
  foundBy?: CatalogFoundBy;
  /** For a `Link` header or an HTML `<link>`: the relation that named the catalog (`ard`, ARD 0.91, before `ai-catalog`). */
  rel?: CatalogLinkRel;
  announcedBy?: string;
  /**
   * Present when the probe stopped short of the whole catalog tree (entries past the entries
   * bound, documents past the documents bound) or its answer was cut: one sentence per bound that bit.
   */
  truncated?: string[];
}

const DOCUMENT_STAGES: CatalogStage[] = ['source', 'address', 'fetch', 'parse', 'schema', 'signature'];

/**
 * Human-readable text: each document's stages, then each of its entries and, indented, the
 * card's own stages as `renderProbe` prints them for one card.
 */
export function renderAiCatalogProbe(r: AiCatalogReport): string {
  const lines: string[] = [`probe AI Catalog ${r.source}`];
  if (r.foundBy !== undefined) lines.push(`       found by ${describeWay(r.foundBy, r.rel)}${r.announcedBy !== undefined ? ` of ${r.announcedBy}` : ''}`);
  const row = (indent: string, mark: string, stage: string, text: string) => lines.push(`${indent}${mark} ${stage.padEnd(10)} ${text}`.trimEnd());
  for (const p of r.problems) lines.push(`       ${p.path}: ${p.message}`);
  for (const n of r.notes) lines.push(`       note ${n}`);
  for (const d of r.documents) {
    lines.push('');
    lines.push(`catalog ${d.url}${d.via === 'root' ? '' : `  (depth ${d.depth}, listed at ${d.via})`}`);
    const mark = stageMarks(DOCUMENT_STAGES, d.usable ? undefined : d.stage);
    const problemsAt = (stage: CatalogStage) => {
      if (d.usable || d.stage !== stage) return;
      for (const p of d.problems) lines.push(`       ${p.path}: ${p.message}`);
    };
    if (!d.usable && (d.stage === 'source' || d.stage === 'address' || (d.stage === 'fetch' && d.status === undefined))) {
      row('', 'FAIL', d.stage, '');
      problemsAt(d.stage);
      continue;
    }
    if (d.origin === 'http') {
      row('', mark('fetch'), 'fetch', `HTTP ${d.status ?? '?'}${d.contentType !== undefined ? `, ${d.contentType}` : ''}`);
      problemsAt('fetch');
      if (d.stage === 'fetch' && !d.usable) continue;
    }
    row('', mark('parse'), 'parse', d.origin === 'inline' ? 'inline in its parent catalog' : d.bytes !== undefined ? `${d.bytes} bytes, sha256 ${d.rawSha256?.slice(0, 16)}…` : '');
    problemsAt('parse');
    if (d.stage === 'parse' && !d.usable) continue;
    const counts = `${d.entries} entr${d.entries === 1 ? 'y' : 'ies'} (${d.cards} A2A card${d.cards === 1 ? '' : 's'}, ${d.nested} nested catalog${d.nested === 1 ? '' : 's'}, ${d.ignored} of other types)`;
    row('', mark('schema'), 'schema', d.specVersion !== undefined ? `AI Catalog ${d.specVersion}: ${counts}` : '');
    problemsAt('schema');
    for (const w of d.warnings.filter((x) => x.path !== 'signature')) lines.push(`       note ${w.path}: ${w.message}`);
    if (d.stage === 'schema' && !d.usable) continue;
    if (d.signature !== undefined) {
      const s = d.signature;
      const detail = s.kid !== undefined ? ` (kid ${s.kid}${s.form !== undefined ? `, ${s.form}` : ''})` : s.status === 'unverified' ? ' (signed by a key not in the trust store: read, not verified)' : '';
      row('', mark('signature'), 'signature', `${s.status}${detail}`);
      problemsAt('signature');
      for (const w of d.warnings.filter((x) => x.path === 'signature')) lines.push(`       note ${w.path}: ${w.message}`);
    }
    if (!d.usable) continue;
    for (const e of r.entries.filter((x) => x.catalog === d.url)) renderEntry(e, lines);
  }
  const c = r.counts;
  lines.push('');
  lines.push(
    `${c.entries} entr${c.entries === 1 ? 'y' : 'ies'}: ${c.cards} A2A card${c.cards === 1 ? '' : 's'} (${c.accepted} accepted, ${c.refused} refused, ${c.superseded} superseded, ${c.notProbed} not probed), ${c.nested} nested catalog${c.nested === 1 ? '' : 's'}, ${c.ignored} ignored`,
  );
  for (const t of r.truncated ?? []) lines.push(`TRUNCATED ${t}`);
  // An accepted card whose security cannot be met would not be selected: said, as for one card.
  const unselected = r.entries.filter((e) => e.report?.accepted === true && !e.report.selection.selected).length;
  const selected = unselected === 0 ? 'would be selected' : `would be admitted; ${unselected} would not be selected (see its security)`;
  lines.push(r.accepted ? `ACCEPTED  every A2A card entry the catalog proposes ${selected}` : `REFUSED   ${refusalSummary(r)}`);
  return lines.join('\n');
}

function renderEntry(e: AiCatalogEntryReport, lines: string[]): void {
  const detail = [e.type, e.inline ? 'inline data' : e.url !== undefined ? `url ${e.url}` : undefined, e.version !== undefined ? `version ${e.version}` : undefined].filter((x) => x !== undefined).join(', ');
  lines.push('');
  lines.push(`  entry ${e.path} ${e.identifier}  (${detail})`);
  const item = (label: string, text: string) => lines.push(`       ${label.padEnd(9)} ${text}`);
  if (e.verdict === 'ignored') item('ignored', 'not an A2A agent card: discovery reads application/a2a-agent-card+json entries and nested catalogs only');
  if (e.nested !== undefined) item('nested', e.nested.followed ? `followed: catalog ${e.nested.url ?? ''}` : `not followed: ${e.nested.reason ?? ''}`);
  if (e.selection !== undefined) {
    const s = e.selection;
    item('version', `${s.decision}: ${s.reason}${s.instead !== undefined && s.decision !== 'only' && s.decision !== 'chosen' ? ` (${s.instead})` : ''}`);
  }
  if (e.trust !== undefined) {
    const t = e.trust;
    const text =
      t.verdict === 'pinned'
        ? `pinned sha256 ${t.sha256} by ${t.identity} (kid ${t.kid})${t.matches === undefined ? '' : t.matches ? "; the card's bytes match" : "; the card's bytes do NOT match"}`
        : t.verdict === 'none'
          ? `no pin${t.reason !== undefined ? `: ${t.reason.message}` : ' (no Trust Manifest)'}`
          : t.verdict === 'unverified'
            ? `unverified, pins nothing: ${t.reason?.message ?? ''}`
            : `REFUSED at ${t.reason?.path ?? 'trustManifest'}: ${t.reason?.message ?? ''}`;
    item('trust', text);
  }
  for (const p of e.problems) if (p.message !== e.nested?.reason) lines.push(`       ${p.path}: ${p.message}`);
  if (e.skipped !== undefined) item('skipped', e.skipped);
  if (e.lookalike !== undefined) item('lookalike', e.lookalike.reason);
  if (e.report !== undefined) for (const l of renderProbe(e.report).split('\n')) lines.push(`    ${l}`);
  else if (e.verdict === 'refused') lines.push('    REFUSED   before any card stage');
}

function refusalSummary(r: AiCatalogReport): string {
  const bad = r.documents.filter((d) => !d.usable).length;
  const parts: string[] = [];
  if (bad > 0) parts.push(`${bad} catalog document${bad === 1 ? '' : 's'} not usable`);
  if (r.counts.refused > 0) parts.push(`${r.counts.refused} entr${r.counts.refused === 1 ? 'y' : 'ies'} refused`);
  const problems = r.problems.length + r.entries.filter((e) => e.verdict !== 'refused' && e.problems.length > 0).length;
  if (problems > 0) parts.push(`${problems} catalog problem${problems === 1 ? '' : 's'}`);
  return parts.join(', ');
}
