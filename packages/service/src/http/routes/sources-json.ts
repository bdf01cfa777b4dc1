/**
 * `GET /api/sources`: what each source is doing, as the dashboard's Sources view shows it, bounded
 * in problems, documents and text per source.
 */
import type { Source } from 'a2a-discovery';
import type { CatalogReport } from 'a2a-discovery/internal';

/** `GET /api/sources` lists at most this many problems and catalog documents per source, then counts the rest. */
const MAX_LISTED_PER_SOURCE = 50;
/** Characters kept of one text field there (a path, a message, a URL); longer text ends in `…`. */
const MAX_TEXT = 2_000;

const clip = (text: string): string => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text);

/**
 * What each source is doing, for `GET /api/sources` and the dashboard's Sources view: its state
 * (ok, synced, when it last listed, how many records), its error, its problems with their paths,
 * and for an AI Catalog source (anything with a `catalogs()` report) each document it read.
 * Bounded: {@link MAX_LISTED_PER_SOURCE} problems and documents per source (`moreProblems`,
 * `moreCatalogs` count the rest), text fields cut at 2,000 characters.
 */
export function sourcesJson(sources: readonly Source[]): { sources: Array<Record<string, unknown>> } {
  return {
    sources: sources.map((source) => {
      const state = source.current();
      const problems = state.problems ?? [];
      const e = state.error;
      const reports = catalogsOf(source);
      return {
        id: source.id,
        kind: source.kind,
        ok: state.ok,
        synced: state.synced,
        updatedAt: state.updatedAt ?? null,
        records: state.records.length,
        ...(e !== undefined && {
          error: {
            code: e.code,
            message: clip(e.message),
            ...(e.url !== undefined && { url: clip(e.url) }),
            ...(e.status !== undefined && { status: e.status }),
            ...(e.problems.length > 0 && { problems: e.problems.slice(0, MAX_LISTED_PER_SOURCE).map(problemJson) }),
          },
        }),
        problems: problems.slice(0, MAX_LISTED_PER_SOURCE).map(problemJson),
        moreProblems: Math.max(0, problems.length - MAX_LISTED_PER_SOURCE),
        ...(reports !== undefined && {
          catalogs: reports.slice(0, MAX_LISTED_PER_SOURCE).map(catalogJson),
          moreCatalogs: Math.max(0, reports.length - MAX_LISTED_PER_SOURCE),
        }),
      };
    }),
  };
}

/** The catalog report of an AI Catalog source, duck-typed (a wrapped or test source may carry one too). */
function catalogsOf(source: Source): readonly CatalogReport[] | undefined {
  const catalogs = (source as Partial<{ catalogs: unknown }>).catalogs;
  if (typeof catalogs !== 'function') return undefined;
  const reports: unknown = catalogs.call(source);
  return Array.isArray(reports) ? (reports as readonly CatalogReport[]) : undefined;
}

function problemJson(p: { path: string; message: string }): { path: string; message: string } {
  return { path: clip(p.path), message: clip(p.message) };
}

function catalogJson(r: CatalogReport): Record<string, unknown> {
  return {
    url: clip(r.url),
    via: clip(r.via),
    depth: r.depth,
    outcome: r.outcome,
    ...(r.specVersion !== undefined && { specVersion: clip(r.specVersion) }),
    ...(r.etag !== undefined && { etag: clip(r.etag) }),
    ...(r.signature !== undefined && { signature: clip(r.signature) }),
    entries: r.entries,
    cards: r.cards,
    nested: r.nested,
    ignored: r.ignored,
    ...(r.error !== undefined && { error: clip(r.error) }),
    ...(r.foundBy !== undefined && { foundBy: r.foundBy }),
    ...(r.announcedBy !== undefined && { announcedBy: clip(r.announcedBy) }),
  };
}
