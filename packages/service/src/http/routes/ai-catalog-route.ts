/**
 * `GET /.well-known/ard.json` (ARD 0.91's manifest location) and `GET /.well-known/ai-catalog.json`
 * (its predecessor, still published): one document, the current snapshot as an AI Catalog
 * (`application/ai-catalog+json`), for other discovery services and catalog readers; the same
 * ETag, Cache-Control and conditional GET at both paths.
 *
 * - The document is built (and signed, with a key) once per snapshot digest, not per request.
 * - Its strong ETag is the digest: a conditional GET whose `If-None-Match` lists it is 304.
 * - The document is a function of the snapshot and of the origin the service is reached at (the
 *   publisher of its own entries' `urn:air:` identifiers: `publicUrl`, else the request's), so
 *   one digest is one document on every replica behind one name and after a restart. Before the
 *   first publication: 503 with `Retry-After`.
 *
 * Public metadata like an agent card: the request guard asks no bearer token for it (it is not
 * under `/api/`), but the Host check applies (docs/service.md).
 */
import type { Context } from 'hono';
import type { CryptoKey, JWK, KeyObject } from 'jose';
import { signDetached, ARD_WELL_KNOWN_PATH } from 'a2a-discovery';
import { AI_CATALOG_MEDIA_TYPE, AI_CATALOG_WELL_KNOWN_PATH } from 'a2a-discovery/internal';
import type { DiscoveryLoop, Snapshot } from 'a2a-discovery';
import { buildAiCatalog } from './ai-catalog.js';
import { problem } from '../problem.js';

/** How the catalog is signed: a detached JWS over RFC 8785 of the document without `signature`. */
export interface CatalogSigning {
  /** The private key. */
  key: KeyObject | CryptoKey | JWK;
  /** The JWS header's `kid`, under which verifiers configure the public key. */
  kid: string;
  /** Default `ES256`. */
  alg?: string;
}

/** Inputs of {@link AiCatalogRoute}. */
export interface AiCatalogRouteOptions {
  loop: Pick<DiscoveryLoop, 'current'>;
  /** `host.displayName`. Default `a2a-discovery`. */
  hostName?: string;
  /** The response's `Cache-Control`. Default `max-age=60`. */
  cacheControl?: string;
  signing?: CatalogSigning;
  /**
   * The ARD registry API's base (`POST <base>search`), listed in the catalog as an entry of type
   * `application/ai-registry+json`: a path of this service (a relative reference, resolved
   * against the catalog's URL) or an absolute URL. Default `/`, the service root.
   */
  registryUrl?: string;
  /** The service as an A2A agent (`server.a2a`): listed as one more entry, at its own card. */
  agent?: { name: string; description: string };
  /**
   * The origin the service is reached at (`server.a2a.publicUrl`): the publisher of its own
   * entries' identifiers and the robots.txt `Agentmap` URL. Default: the request's origin.
   */
  publicUrl?: string;
}

/** The registry API's base by default: the service root (the ARD routes are `/search`, `/agents`, `/explore`). */
const DEFAULT_REGISTRY_URL = '/api/registry/';

/**
 * The `Link` header the service's pages carry (RFC 8288): where its catalog is (ARD §6.1), at
 * ARD 0.91's location (`rel="ard"`) and at its predecessor's (`rel="ai-catalog"`).
 */
export const AI_CATALOG_LINK = `<${ARD_WELL_KNOWN_PATH}>; rel="ard"; type="${AI_CATALOG_MEDIA_TYPE}", <${AI_CATALOG_WELL_KNOWN_PATH}>; rel="ai-catalog"; type="${AI_CATALOG_MEDIA_TYPE}"`;

/** Origins whose document is kept at once (the Host check bounds them; a few names of one service). */
const MAX_ORIGINS = 8;

/** The route and its memoized documents (the current digest's, one per origin). */
export class AiCatalogRoute {
  readonly #o: AiCatalogRouteOptions;
  /** The current documents by origin, of one digest and version (a digest published again gets a new version). */
  #memo: { digest: string; version: number; bodies: Map<string, Promise<string>> } | undefined;

  constructor(options: AiCatalogRouteOptions) {
    this.#o = options;
  }

  /** Handles one GET or HEAD. */
  async handle(c: Context): Promise<Response> {
    const snapshot = this.#o.loop.current();
    if (snapshot === undefined) {
      c.header('Retry-After', '5');
      return problem(c, 503, 'not-ready', 'no snapshot has been published yet');
    }
    // RFC 9110 §13.1.2: If-None-Match uses the weak comparison; "*" matches any current representation.
    const etag = `"${snapshot.digest}"`;
    const headers = { etag, 'cache-control': this.#o.cacheControl ?? 'max-age=60' };
    // §15.4.5: a 304 carries the ETag and Cache-Control a 200 would have carried.
    if (ifNoneMatch(c.req.header('if-none-match'), etag)) return c.body(null, 304, headers);
    return c.body(await this.document(snapshot, this.#origin(c)), 200, { ...headers, 'content-type': AI_CATALOG_MEDIA_TYPE });
  }

  /** The origin the service is reached at: `publicUrl`, else the request's. */
  #origin(c: Context): string {
    return this.#o.publicUrl !== undefined ? new URL(this.#o.publicUrl).origin : new URL(c.req.url).origin;
  }

  /**
   * `GET /robots.txt`: everything allowed (nothing public is disallowed) and an `Agentmap:` line
   * naming the catalog by its absolute URL (ARD 0.91), at `ard.json` (`publicUrl`, else the
   * origin the request reached).
   */
  robots(c: Context): Response {
    const text = `# a2a-discovery: this service's ARD manifest (AI Catalog, ARD spec \u00a76.1)\nUser-agent: *\nAllow: /\n\nAgentmap: ${this.#origin(c)}${ARD_WELL_KNOWN_PATH}\n`;
    return c.body(text, 200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': this.#o.cacheControl ?? 'max-age=60' });
  }

  /** The document of `snapshot` as JSON text for `origin`, built and signed once per digest and origin. */
  document(snapshot: Snapshot, origin = 'http://localhost'): Promise<string> {
    if (this.#memo?.digest !== snapshot.digest || this.#memo.version !== snapshot.version) this.#memo = { digest: snapshot.digest, version: snapshot.version, bodies: new Map() };
    const memo = this.#memo;
    const known = memo.bodies.get(origin);
    if (known !== undefined) return known;
    const body = this.#build(snapshot, origin);
    memo.bodies.set(origin, body);
    if (memo.bodies.size > MAX_ORIGINS) memo.bodies.delete(memo.bodies.keys().next().value!);
    body.catch(() => {
      // A failed build is not kept: the next request tries again.
      if (memo.bodies.get(origin) === body) memo.bodies.delete(origin);
    });
    return body;
  }

  async #build(snapshot: Snapshot, origin: string): Promise<string> {
    const { signing } = this.#o;
    const hostName = this.#o.hostName ?? 'a2a-discovery';
    const doc = buildAiCatalog(snapshot, {
      hostName,
      origin,
      ...(this.#o.agent && { agent: this.#o.agent }),
      // The service's own ARD registry (ARD §4.1, §7): after the agents, one entry of its own type.
      registry: { url: this.#o.registryUrl ?? DEFAULT_REGISTRY_URL, displayName: `${hostName} registry` },
    });
    return JSON.stringify(signing ? await signDetached(doc, signing.key, { alg: signing.alg ?? 'ES256', kid: signing.kid }) : doc);
  }
}

/** Whether `If-None-Match` lists `etag` (RFC 9110 §13.1.2: weak comparison; `*` matches any). */
export function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
