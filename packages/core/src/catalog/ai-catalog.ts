/**
 * The AI Catalog document (`application/ai-catalog+json`, Agent-Card/ai-catalog, specVersion
 * 1.x): read from untrusted bytes or an inline JSON value into a checked model, every problem
 * with its JSON path. Pure: no I/O. See docs/sources.md ("AI Catalog").
 *
 * What makes a document unusable (the reader returns `ok: false`, the last good catalog keeps
 * serving): bytes that are not bounded UTF-8 JSON, a root that is not an object, a missing or
 * malformed `specVersion`, a major version other than 1, `entries` that is not an array, an
 * entry that is not an object, has no `identifier` or `type` string, has a relative identifier
 * (ARD 0.91: identifiers are absolute), or has both or neither of `url` and `data`, a `url` that
 * is not a string. An entry's type is `type`, else `mediaType` (its earlier name; `type` wins when
 * both differ, with a warning); a `urn:ai:` identifier is read as its `urn:air:` form
 * (catalog/identifiers.ts). Everything else an entry gets wrong (a `tags`
 * that is not a list of strings, an `updatedAt` that is not a timestamp) is a warning and the
 * value is dropped.
 *
 * @module
 */
import type { JsonLimits } from '../card/safe-json.js';
import { parseSafeJson, parseSafeJsonSteps } from '../card/safe-json.js';
import type { DiscoveryErrorCode, Problem } from '../errors.js';
import { CATALOG_DEFAULTS } from '../rules/defaults.js';
import { DEFAULT_MAX_CATALOG_BYTES } from '../rules/limits.js';
import { describe, hasControl } from '../text.js';
import { canonicalIdentifier, relativeIdentifierProblem } from './identifiers.js';
import { runPaced, runSteps, type Pacer } from '../clock/pacer.js';
import { frozenCopy } from '../rules/frozen.js';

/** The catalog's media type. */
export const AI_CATALOG_MEDIA_TYPE = 'application/ai-catalog+json';
/** The entry type of an A2A agent card. */
export const A2A_CARD_MEDIA_TYPE = 'application/a2a-agent-card+json';
/** The specification version this library reads and writes. Documents of any 1.x are read. */
export const AI_CATALOG_SPEC_VERSION = '1.0';
/** Where a host served its catalog before ARD 0.91 (RFC 8615), relative to the origin: still read, second, and still published. */
export const AI_CATALOG_WELL_KNOWN_PATH = '/.well-known/ai-catalog.json';
/** The catalog's (the ARD manifest's) canonical location since ARD 0.91, relative to the origin: read first. */
export const ARD_WELL_KNOWN_PATH = '/.well-known/ard.json';
/** The well-known paths a reader tries at an origin, in order: ARD 0.91's, then its predecessor's. */
export const CATALOG_WELL_KNOWN_PATHS: readonly string[] = Object.freeze([ARD_WELL_KNOWN_PATH, AI_CATALOG_WELL_KNOWN_PATH]);

/** Limits of one catalog document. */
export interface CatalogLimits {
  /** Bytes of one catalog document. Default 1 MiB (a catalog source's `maxBytes`, the probe's and the inspector's bound). */
  maxBytes?: number;
  /** Entries in one document. Default 5,000 (as many as one walk reads). */
  maxEntries?: number;
}

/** The defaults of {@link CatalogLimits}: 1 MiB, 5,000 entries. */
export const DEFAULT_CATALOG_LIMITS: Required<CatalogLimits> = Object.freeze({ maxBytes: DEFAULT_MAX_CATALOG_BYTES, maxEntries: CATALOG_DEFAULTS.maxEntries });

/** Limits of a field a catalog entry carries; longer values are refused (identifier) or dropped (text). */
const MAX_IDENTIFIER = 1_024;
const MAX_TEXT = 4_096;
const MAX_TAGS = 64;
const MAX_TAG = 64;

/** One entry as read. All of it is third-party text: data for display, never a reviewed description. */
export interface AiCatalogEntry {
  /** JSON path in its document, e.g. `entries[3]`. */
  readonly path: string;
  readonly identifier: string;
  /** The media type's essence, lower case, parameters dropped (`application/a2a-agent-card+json`). */
  readonly type: string;
  /** Exactly one of `url` and `data` is set. `url` as given (resolved against the catalog URL by the source). */
  readonly url?: string;
  readonly data?: unknown;
  readonly displayName?: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  readonly version?: string;
  /** As given (RFC 3339); `updatedAtMs` is its epoch ms when it parses. */
  readonly updatedAt?: string;
  readonly updatedAtMs?: number;
  /** The raw Trust Manifest object, when one is present (judged by `readTrustManifest`). */
  readonly trustManifest?: Readonly<Record<string, unknown>>;
}

/** A catalog document as read. */
export interface AiCatalog {
  readonly specVersion: string;
  readonly host?: { readonly displayName?: string; readonly identifier?: string };
  readonly entries: readonly AiCatalogEntry[];
  /** The raw JSON object, for signature verification (never for display). */
  readonly raw: Readonly<Record<string, unknown>>;
}

/**
 * A catalog as a cache keeps it once accepted: without its raw object, which only its signature
 * check and its canonical form needed (its bytes are kept beside it).
 */
export type CachedAiCatalog = Omit<AiCatalog, 'raw'>;

export type ReadCatalogResult =
  | { readonly ok: true; readonly catalog: AiCatalog; readonly text?: string; readonly warnings: readonly Problem[] }
  | { readonly ok: false; readonly code: Extract<DiscoveryErrorCode, 'ERR_CARD_TOO_LARGE' | 'ERR_CARD_MALFORMED' | 'ERR_CARD_INVALID'>; readonly problems: readonly Problem[] };

/**
 * Reads catalog bytes: bounded, strict UTF-8 JSON (no `__proto__` keys), then {@link readAiCatalogValuePaced}.
 *
 * @example
 * const r = readAiCatalog(res.body);
 * if (!r.ok) console.log(r.code, r.problems); else r.catalog.entries.forEach((e) => console.log(e.identifier));
 */
export function readAiCatalog(bytes: Uint8Array, limits: CatalogLimits = {}): ReadCatalogResult {
  const l = { ...DEFAULT_CATALOG_LIMITS, ...limits };
  const parsed = parseSafeJson(bytes, jsonLimits(l));
  if (!parsed.ok) return Object.freeze({ ok: false, code: parsed.code, problems: Object.freeze(parsed.problems) });
  const read = runSteps(readValue(parsed.value, l));
  return read.ok ? frozenCopy(read, { text: parsed.text }) : read;
}

/**
 * {@link readAiCatalog} in slices: the same result, the JSON's structure walk and the entries
 * read between `pacer` ticks, so a catalog of thousands of entries lets the event loop run (only
 * `JSON.parse` of the bytes is one piece).
 */
export async function readAiCatalogPaced(bytes: Uint8Array, limits: CatalogLimits, pacer: Pacer): Promise<ReadCatalogResult> {
  const l = { ...DEFAULT_CATALOG_LIMITS, ...limits };
  const parsed = await runPaced(parseSafeJsonSteps(bytes, jsonLimits(l)), pacer);
  if (!parsed.ok) return Object.freeze({ ok: false, code: parsed.code, problems: Object.freeze(parsed.problems) });
  await pacer.tick();
  const read = await readAiCatalogValuePaced(parsed.value, l, pacer);
  return read.ok ? frozenCopy(read, { text: parsed.text }) : read;
}

/** {@link readAiCatalogValue} in slices: the same result, the entries read between `pacer` ticks. */
export function readAiCatalogValuePaced(value: unknown, limits: CatalogLimits, pacer: Pacer): Promise<ReadCatalogResult> {
  return runPaced(readValue(value, { ...DEFAULT_CATALOG_LIMITS, ...limits }), pacer);
}

/** Entries read between two yields of {@link readValue}. */
const ENTRIES_PER_STEP = 50;

/** The JSON limits of a catalog document: wide enough for its entries and inline cards. */
function jsonLimits(l: Required<CatalogLimits>): JsonLimits {
  return { maxBytes: l.maxBytes, maxDepth: 40, maxArrayLength: Math.max(1_000, l.maxEntries), maxObjectKeys: 1_000, maxStringLength: 16_384 };
}


/** The reader, yielding every {@link ENTRIES_PER_STEP} entries (where a paced caller lets the event loop run). */
function* readValue(value: unknown, l: Required<CatalogLimits>): Generator<void, ReadCatalogResult> {
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  if (!isObject(value)) {
    return invalid([{ path: '$', message: `an AI Catalog is a JSON object with "specVersion" and "entries", got ${describe(value)}` }]);
  }
  const specVersion = value['specVersion'];
  if (specVersion === undefined) problems.push({ path: 'specVersion', message: `is missing; an AI Catalog names the specification version it follows (this consumer reads ${AI_CATALOG_SPEC_VERSION})` });
  else if (typeof specVersion !== 'string' || !/^\d+\.\d+(\.\d+)?$/.test(specVersion)) {
    problems.push({ path: 'specVersion', message: `must be a "Major.Minor" string such as "${AI_CATALOG_SPEC_VERSION}", got ${describe(specVersion)}` });
  } else if (specVersion.split('.')[0] !== '1') {
    problems.push({ path: 'specVersion', message: `${describe(specVersion)} is a major version this consumer does not read (it follows AI Catalog 1.x); refused rather than misread` });
  } else if (specVersion.split('.').length === 3) {
    warnings.push({ path: 'specVersion', message: `${describe(specVersion)}: the specification writes "Major.Minor"; read as ${specVersion.split('.').slice(0, 2).join('.')}` });
  }
  const entries: AiCatalogEntry[] = [];
  const rawEntries = value['entries'];
  if (!Array.isArray(rawEntries)) problems.push({ path: 'entries', message: `must be an array of catalog entries, got ${describe(rawEntries)}` });
  else if (rawEntries.length > l.maxEntries) problems.push({ path: 'entries', message: `has ${rawEntries.length} entries; at most ${l.maxEntries} are read in one catalog (catalog.maxEntries)` });
  else {
    for (let i = 0; i < rawEntries.length; i++) {
      const entry = readEntry(rawEntries[i] as unknown, `entries[${i}]`, problems, warnings);
      if (entry !== undefined) entries.push(entry);
      if (i % ENTRIES_PER_STEP === ENTRIES_PER_STEP - 1) yield;
    }
  }
  if (value['signature'] !== undefined && typeof value['signature'] !== 'string') {
    problems.push({ path: 'signature', message: `must be a detached JWS string, got ${describe(value['signature'])}` });
  }
  let host: AiCatalog['host'];
  const rawHost = value['host'];
  if (rawHost !== undefined) {
    if (!isObject(rawHost)) warnings.push({ path: 'host', message: `must be an object; ignored (got ${describe(rawHost)})` });
    else {
      const displayName = text(rawHost['displayName'], 'host.displayName', warnings);
      const identifier = text(rawHost['identifier'], 'host.identifier', warnings);
      host = frozenCopy({ ...(displayName !== undefined && { displayName }), ...(identifier !== undefined && { identifier }) });
    }
  }
  if (problems.length > 0) return invalid(problems);
  return Object.freeze({
    ok: true,
    catalog: Object.freeze({ specVersion: specVersion as string, ...(host !== undefined && { host }), entries: Object.freeze(entries), raw: value }),
    warnings: Object.freeze(warnings),
  });
}

function readEntry(raw: unknown, at: string, problems: Problem[], warnings: Problem[]): AiCatalogEntry | undefined {
  if (!isObject(raw)) {
    problems.push({ path: at, message: `a catalog entry must be an object with identifier, type and url or data, got ${describe(raw)}` });
    return undefined;
  }
  const before = problems.length;
  const identifier = raw['identifier'];
  if (typeof identifier !== 'string' || identifier.trim() === '' || identifier.length > MAX_IDENTIFIER || hasControl(identifier)) {
    problems.push({ path: `${at}.identifier`, message: `must be a non-empty string of at most ${MAX_IDENTIFIER} characters without control characters, got ${describe(identifier)}` });
  } else {
    const relative = relativeIdentifierProblem(identifier);
    if (relative !== undefined) problems.push({ path: `${at}.identifier`, message: relative });
  }
  // `mediaType` is the member's earlier name (drafts before 1.0, the spec-works reference
  // implementations, and the reference reader of ARD 0.91, which still asks for it): read as
  // `type` when `type` is absent, with a warning. Both present and different: `type` wins.
  const legacy = raw['type'] === undefined && typeof raw['mediaType'] === 'string';
  const type = legacy ? raw['mediaType'] : raw['type'];
  if (legacy) warnings.push({ path: `${at}.mediaType`, message: 'is the earlier name of "type"; read as type' });
  else if (typeof type === 'string' && typeof raw['mediaType'] === 'string' && mediaType(raw['mediaType']) !== mediaType(type)) {
    warnings.push({ path: `${at}.mediaType`, message: `${describe(raw['mediaType'])} differs from type ${describe(type)}; type is read (mediaType is its earlier name)` });
  }
  if (typeof type !== 'string' || type.trim() === '' || type.length > 256) problems.push({ path: `${at}.type`, message: `must be a media type string such as "${A2A_CARD_MEDIA_TYPE}", got ${describe(type)}` });
  const hasUrl = raw['url'] !== undefined;
  // `data: null` carries no artifact.
  const hasData = raw['data'] !== undefined && raw['data'] !== null;
  if (hasUrl && hasData) problems.push({ path: at, message: 'has both "url" and "data"; an entry gives its artifact exactly one way' });
  else if (!hasUrl && !hasData) problems.push({ path: at, message: 'has neither "url" nor "data"; an entry gives its artifact by URL or inline' });
  else if (hasUrl && (typeof raw['url'] !== 'string' || raw['url'] === '' || raw['url'].length > 2_048)) {
    problems.push({ path: `${at}.url`, message: `must be a URL string of at most 2048 characters, got ${describe(raw['url'])}` });
  }
  if (problems.length > before) return undefined;
  const displayName = text(raw['displayName'], `${at}.displayName`, warnings);
  const description = text(raw['description'], `${at}.description`, warnings);
  const version = text(raw['version'], `${at}.version`, warnings);
  const updatedAt = text(raw['updatedAt'], `${at}.updatedAt`, warnings);
  let updatedAtMs: number | undefined;
  if (updatedAt !== undefined) {
    const ms = /^\d{4}-\d{2}-\d{2}T/.test(updatedAt) ? Date.parse(updatedAt) : Number.NaN;
    if (Number.isFinite(ms)) updatedAtMs = ms;
    else warnings.push({ path: `${at}.updatedAt`, message: `${describe(updatedAt)} is not an RFC 3339 timestamp; not used to order versions` });
  }
  let tags: string[] | undefined;
  const rawTags = raw['tags'];
  if (rawTags !== undefined) {
    if (!Array.isArray(rawTags)) warnings.push({ path: `${at}.tags`, message: `must be an array of strings; ignored (got ${describe(rawTags)})` });
    else {
      tags = [];
      rawTags.slice(0, MAX_TAGS).forEach((t: unknown, j) => {
        if (typeof t === 'string' && t !== '' && t.length <= MAX_TAG && !hasControl(t) && !t.includes(',')) tags!.push(t);
        else warnings.push({ path: `${at}.tags[${j}]`, message: `must be a string of 1-${MAX_TAG} characters without commas or control characters; dropped (got ${describe(t)})` });
      });
      if (rawTags.length > MAX_TAGS) warnings.push({ path: `${at}.tags`, message: `has ${rawTags.length} tags; the first ${MAX_TAGS} are kept` });
    }
  }
  const manifest = raw['trustManifest'];
  if (manifest !== undefined && !isObject(manifest)) warnings.push({ path: `${at}.trustManifest`, message: `must be an object; ignored (got ${describe(manifest)})` });
  return Object.freeze({
    path: at,
    // `urn:ai:` and `urn:air:` are one identifier: kept in the form we compare and publish.
    identifier: canonicalIdentifier(identifier as string),
    type: mediaType(type as string),
    ...(hasUrl ? { url: raw['url'] as string } : { data: raw['data'] }),
    ...(displayName !== undefined && { displayName }),
    ...(description !== undefined && { description }),
    ...(tags !== undefined && { tags: Object.freeze(tags) }),
    ...(version !== undefined && { version }),
    ...(updatedAt !== undefined && { updatedAt }),
    ...(updatedAtMs !== undefined && { updatedAtMs }),
    ...(isObject(manifest) && { trustManifest: manifest }),
  });
}

/** An optional text member: kept when it is a bounded string without control characters, else a warning. */
function text(value: unknown, path: string, warnings: Problem[]): string | undefined {
  if (value === undefined || value === null) return undefined;
  // Tabs and line breaks are fine in a description; other control characters are not.
  // eslint-disable-next-line no-control-regex
  if (typeof value !== 'string' || value.length > MAX_TEXT || /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value)) {
    warnings.push({ path, message: `must be a string of at most ${MAX_TEXT} characters without control characters; ignored (got ${describe(value)})` });
    return undefined;
  }
  return value;
}

/** A media type as compared: its essence (`type/subtype`, parameters dropped), lower case. */
export function mediaType(value: string): string {
  return value.split(';')[0]!.trim().toLowerCase();
}

function invalid(problems: Problem[]): ReadCatalogResult {
  return Object.freeze({ ok: false, code: 'ERR_CARD_INVALID', problems: Object.freeze(problems) });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
