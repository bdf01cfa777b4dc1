/**
 * How a host announces its AI Catalog when it serves none at `/.well-known/ard.json` nor at its
 * predecessor `/.well-known/ai-catalog.json` (ARD §6.1 "Discovery Mechanisms", issue 26; ARD
 * 0.91 adds the relation `ard`): an HTTP `Link: <…>; rel="ard"` (or `rel="ai-catalog"`) header
 * on its root page, an HTML `<link rel="ard" href="…">` (or `rel="ai-catalog"`) in that page's
 * `<head>`, or an `Agentmap: <url>` line in its robots.txt. The `Link` header is read by `http-link-header`, the
 * page by `htmlparser2` (a tokenizer: nothing is rendered, no script runs; only the page's first
 * bytes are scanned); {@link discoverCatalog} makes
 * the (at most two) requests through the source's fetcher, under the allowlist and its bounds.
 *
 * Precedence (docs/sources.md): the well-known URI (read by the source before this), then the
 * `Link` header, then the HTML `<link>` (both from one `GET /`), then robots.txt (requested only
 * when the root page announced nothing the allowlist admits). Within the `Link` header and within
 * the page, `rel="ard"` links before `rel="ai-catalog"` ones; otherwise the order given.
 *
 * @module
 */
import type * as HtmlParser from 'htmlparser2';
import LinkHeader from 'http-link-header';
import { isDiscoveryError, toDiscoveryError } from '../errors.js';
import type { CardFetcher, HostPolicy } from '../fetch/index.js';
import { redactUrl } from '../fetch/index.js';

/** How a catalog was found: at its well-known URI, or announced by one of the three paths. */
export type CatalogFoundBy = 'well-known' | 'link-header' | 'html-link' | 'robots-agentmap';

/**
 * The link relation types that name a catalog (`Link` header and HTML `<link>`), in the order
 * they are read: ARD 0.91's `ard`, then its predecessor `ai-catalog`.
 */
const CATALOG_LINK_RELS: readonly CatalogLinkRel[] = ['ard', 'ai-catalog'];

/** A link relation type that names a catalog: ARD 0.91's `ard`, or its predecessor `ai-catalog`. */
export type CatalogLinkRel = 'ard' | 'ai-catalog';

/** A catalog link found in a `Link` header or an HTML page, with its relation. */
interface CatalogLink {
  url: string;
  rel: CatalogLinkRel;
}

/** Bytes of the root page scanned for an HTML `<link>` (the `<head>` comes first). */
export const HTML_SCAN_BYTES = 64 * 1024;

/** Characters of a `Link` header read (a longer one is read up to there). */
const LINK_HEADER_CHARS = 16 * 1024;

/** Announced catalogs tried at most per host (the first that reads wins). */
const MAX_ANNOUNCED_CATALOGS = 3;

/** A catalog URL announced by a host. */
export interface AnnouncedCatalog {
  /** The catalog URL, resolved against the page that announced it. */
  url: string;
  foundBy: Exclude<CatalogFoundBy, 'well-known'>;
  /** For a `Link` header or an HTML `<link>`: the relation that named it (`ard` before `ai-catalog`). */
  rel?: CatalogLinkRel;
  /** The URL whose response announced it (`https://host/` or `https://host/robots.txt`). */
  announcedBy: string;
}

/** What {@link discoverCatalog} learnt about one host. */
export interface CatalogDiscovery {
  /** Announced catalogs the allowlist admits, in precedence order (at most {@link MAX_ANNOUNCED_CATALOGS}). */
  admitted: AnnouncedCatalog[];
  /** Why an announced catalog, or a request for an announcement, gave nothing (for the source's problems). */
  notes: Array<{ path: string; message: string }>;
}

/**
 * The targets of the `rel="ard"` links of a `Link` header (RFC 8288 §3), then of its
 * `rel="ai-catalog"` links, resolved against `base`, each once. Tolerant: a malformed link-value is skipped, not fatal; `rel` is a
 * space-separated, case-insensitive list and only its first occurrence counts; a link with an
 * `anchor` parameter is about another resource than the page and is skipped.
 *
 * @example
 * catalogLinksInHeader('</cat.json>; rel="ai-catalog", </style.css>; rel=preload', 'https://a.example/')
 * // ['https://a.example/cat.json']
 */
export function catalogLinksInHeader(value: string, base: string): string[] {
  return headerLinks(value, base).map((l) => l.url);
}

/** {@link catalogLinksInHeader} with each link's relation. */
function headerLinks(value: string, base: string): CatalogLink[] {
  let links: LinkHeader;
  try {
    links = LinkHeader.parse(value.slice(0, LINK_HEADER_CHARS));
  } catch {
    // A malformed header announces nothing (the library reads the whole field or none of it).
    return [];
  }
  const found: CatalogLink[] = [];
  // `rel` is matched case-insensitively; a link about another resource (`anchor`) is skipped.
  for (const rel of CATALOG_LINK_RELS) {
    for (const link of links.rel(rel)) {
      if (link.anchor !== undefined) continue;
      const url = resolve(link.uri, base);
      if (url !== undefined && !found.some((f) => f.url === url)) found.push({ url, rel });
    }
  }
  return found;
}

/**
 * The `href` of each `<link rel="ard">`, then of each `<link rel="ai-catalog">`, in the `<head>` of
 * an HTML page, resolved against the page's `<base href>` when it has one, else `base`, in
 * document order within each relation, each once. A bounded, tolerant
 * scan of the first `maxBytes` bytes: comments, `<script>`, `<style>`, `<template>` and
 * `<noscript>` contents are skipped (never run), and the scan stops at `</head>` or `<body`.
 *
 * @example
 * await catalogLinksInHtml('<head><link rel="ai-catalog" href="/c.json"></head>', 'https://a.example/')
 * // ['https://a.example/c.json']
 */
export async function catalogLinksInHtml(page: Uint8Array | string, base: string, maxBytes = HTML_SCAN_BYTES): Promise<string[]> {
  return (await htmlLinks(page, base, maxBytes)).map((l) => l.url);
}

/**
 * htmlparser2, loaded the first time a page is read for its links: a process that reads none
 * never loads it (part of a command's start, docs/benchmarks.md "Issue 43: the command line").
 */
let htmlParser: Promise<typeof HtmlParser> | undefined;

/** {@link catalogLinksInHtml} with each link's relation. */
async function htmlLinks(page: Uint8Array | string, base: string, maxBytes: number): Promise<CatalogLink[]> {
  const { Parser } = await (htmlParser ??= import('htmlparser2'));
  const html = typeof page === 'string' ? page.slice(0, maxBytes) : Buffer.from(page.buffer, page.byteOffset, Math.min(page.byteLength, maxBytes)).toString('utf8');
  const hrefs: Record<CatalogLinkRel, string[]> = { ard: [], 'ai-catalog': [] };
  let docBase = base;
  let done = false;
  // Elements whose content is not markup a browser with scripting would read as such.
  let inert = 0;
  const parser = new Parser(
    {
      onopentag(tag, attributes) {
        if (done) return;
        if (tag === 'body') {
          done = true;
          return;
        }
        if (INERT_TAGS.has(tag)) inert++;
        if (inert > 0) return;
        if (tag === 'base' && docBase === base) {
          const resolved = attributes.href !== undefined ? resolve(attributes.href, base) : undefined;
          if (resolved !== undefined) docBase = resolved;
          return;
        }
        if (tag !== 'link' || attributes.href === undefined) return;
        const rels = (attributes.rel ?? '').toLowerCase().split(/[ \t\n\f\r]+/);
        const rel = CATALOG_LINK_RELS.find((r) => rels.includes(r));
        if (rel === undefined) return;
        const url = resolve(attributes.href, docBase);
        if (url !== undefined) hrefs[rel].push(url);
      },
      onclosetag(tag) {
        if (tag === 'head') done = true;
        else if (INERT_TAGS.has(tag) && inert > 0) inert--;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  // No end(): a tag cut off by the end of what is scanned is dropped, as a browser drops it at EOF.
  const found: CatalogLink[] = [];
  for (const rel of CATALOG_LINK_RELS) for (const url of hrefs[rel]) if (!found.some((f) => f.url === url)) found.push({ url, rel });
  return found;
}

/** Elements whose content is skipped (htmlparser2 already reads script, style, title and textarea as raw text). */
const INERT_TAGS: ReadonlySet<string> = new Set(['template', 'noscript']);

/**
 * The `Agentmap:` lines of a robots.txt (field name case-insensitive, anywhere in the file, like
 * `Sitemap:`; `#` starts a comment), resolved against the robots.txt URL, in order.
 *
 * @example
 * agentmapsInRobots('User-agent: *\nAgentmap: https://a.example/c.json\n', 'https://a.example/robots.txt')
 * // ['https://a.example/c.json']
 */
export function agentmapsInRobots(text: string, base: string): string[] {
  const found: string[] = [];
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = raw.replace(/#.*$/, '');
    const colon = line.indexOf(':');
    if (colon === -1 || line.slice(0, colon).trim().toLowerCase() !== 'agentmap') continue;
    const url = resolve(line.slice(colon + 1).trim(), base);
    if (url !== undefined) found.push(url);
  }
  return found;
}

/**
 * Asks a site where its catalog is: `GET <origin>/` (its `Link` header, then its HTML
 * `<link>`), then, only when that gave nothing the allowlist admits, `GET /robots.txt`. Each
 * request goes through `fetcher` (allowlist, address guard, no redirects, its size and time
 * bounds, the origin budget it draws on); each announced URL is judged by `hostPolicy` before it
 * is kept (a catalog on an origin it does not admit is noted and never requested). Never throws.
 */
export async function discoverCatalog(origin: string, fetcher: CardFetcher, hostPolicy: HostPolicy, signal?: AbortSignal): Promise<CatalogDiscovery> {
  const root = `${origin}/`;
  const out: CatalogDiscovery = { admitted: [], notes: [] };
  const judge = (links: Array<{ url: string; rel?: CatalogLinkRel }>, foundBy: AnnouncedCatalog['foundBy'], announcedBy: string): void => {
    for (const { url, rel } of links) {
      if (out.admitted.length >= MAX_ANNOUNCED_CATALOGS) return;
      if (out.admitted.some((a) => a.url === url)) continue;
      const verdict = hostPolicy.check(url);
      if (!verdict.allowed) {
        out.notes.push({ path: announcedBy, message: `${describeWay(foundBy, rel)} announces the catalog ${redactUrl(url)}, which the allowlist does not admit (${verdict.reason}); not read` });
        continue;
      }
      out.admitted.push({ url, foundBy, ...(rel !== undefined && { rel }), announcedBy });
    }
  };
  const page = await get(fetcher, root, 'text/html, application/xhtml+xml;q=0.9, */*;q=0.1', signal);
  if ('res' in page) {
    const link = page.res.headers['link'];
    if (link !== undefined) judge(headerLinks(link, root), 'link-header', root);
    const type = (page.res.headers['content-type'] ?? 'text/html').split(';')[0]!.trim().toLowerCase();
    if (type === 'text/html' || type === 'application/xhtml+xml') judge(await htmlLinks(page.res.body, root, HTML_SCAN_BYTES), 'html-link', root);
  } else if (page.note !== undefined) out.notes.push({ path: root, message: `the root page could not be read for a catalog announcement: ${page.note}` });
  if (out.admitted.length > 0) return out;
  const robotsUrl = `${root}robots.txt`;
  const robots = await get(fetcher, robotsUrl, 'text/plain, */*;q=0.1', signal);
  if ('res' in robots) judge(agentmapsInRobots(robots.res.body.toString('utf8'), robotsUrl).map((url) => ({ url })), 'robots-agentmap', robotsUrl);
  else if (robots.note !== undefined) out.notes.push({ path: robotsUrl, message: `robots.txt could not be read for an Agentmap line: ${robots.note}` });
  return out;
}

/** The way a catalog was found, in words (problems, probe output); `rel`, the relation of a link (default `ai-catalog`). */
export function describeWay(foundBy: CatalogFoundBy, rel: CatalogLinkRel = 'ai-catalog'): string {
  switch (foundBy) {
    case 'well-known':
      return 'the well-known URI';
    case 'link-header':
      return `the Link header (rel="${rel}")`;
    case 'html-link':
      return `the HTML <link rel="${rel}">`;
    case 'robots-agentmap':
      return 'the robots.txt Agentmap line';
  }
}

/** One GET: a 2xx response, or why there is none (nothing to say for a plain 404/410). */
async function get(fetcher: CardFetcher, url: string, accept: string, signal: AbortSignal | undefined): Promise<{ res: { headers: Record<string, string>; body: Buffer } } | { note?: string }> {
  try {
    const res = await fetcher.fetch(url, { headers: { accept }, ...(signal !== undefined && { signal }) });
    if (res.status >= 200 && res.status < 300) return { res };
    if (res.status === 404 || res.status === 410) return {};
    return { note: `HTTP ${res.status}` };
  } catch (err) {
    const e = isDiscoveryError(err) ? err : toDiscoveryError(err, 'ERR_FETCH_NETWORK', { url, stage: 'source' });
    return { note: `${e.code}: ${e.message}` };
  }
}

/** `href` resolved against `base`, fragment dropped; undefined when it is not a URL or not http(s). */
function resolve(href: string, base: string): string | undefined {
  const trimmed = href.trim();
  if (trimmed === '') return undefined;
  try {
    const url = new URL(trimmed, base);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    url.hash = '';
    return url.href;
  } catch {
    return undefined;
  }
}
