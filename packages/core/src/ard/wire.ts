/**
 * The wire shapes of the Agentic Resource Discovery (ARD) API, spec v0.9 (`ards-project/ard-spec`,
 * `spec/ard.md` §7–§8, `spec/schemas/ard.openapi.yaml`): what a registry answers to
 * `POST /search`, `POST /explore` and `GET /agents`, and what it is asked. The service implements
 * them; the ARD source and federation read them from other registries. Types only, plus the
 * media type and the bounds every party here applies.
 *
 * Where the spec is a draft or silent, `docs/registry-api.md` says what we chose.
 *
 * @module
 */

/** The media type of a registry entry in an AI Catalog (ARD §4.1): its `url` is the registry's API base. */
export const AI_REGISTRY_MEDIA_TYPE = 'application/ai-registry+json';

/** `federation` of a search (ARD §8). The spec's default is `auto`. */
export type ArdFederation = 'auto' | 'referrals' | 'none';

/** The query of a search or an explore (ARD §7.1). */
interface ArdQuery {
  /** Natural-language text; required for search, optional for explore. */
  readonly text?: string;
  /**
   * Structured constraints: keys are dot-separated field paths into the catalog entry (a bare
   * scalar counts as a one-element array); OR within a key, AND across keys.
   */
  readonly filter?: Readonly<Record<string, unknown>>;
}

/** `POST /search` (ARD §7.2). */
export interface ArdSearchRequest {
  readonly query: ArdQuery;
  readonly federation?: ArdFederation;
  /** Default 10, at most 100. */
  readonly pageSize?: number;
  readonly pageToken?: string;
}

/**
 * One result: an AI Catalog entry (ARD §4.2: `identifier`, `displayName`, `type`, `url` or
 * `data`, `description`, `tags`, `version`, `updatedAt`, `metadata`, `extensions`…) plus its
 * relevance `score` (0–100, relevance only, never trust) and the registry it came from.
 */
export interface ArdSearchResult {
  readonly identifier: string;
  readonly displayName: string;
  readonly type: string;
  readonly url?: string;
  readonly data?: unknown;
  readonly description?: string;
  readonly tags?: readonly string[];
  readonly updatedAt?: string;
  /**
   * In a change feed (`GET /agents?updated_since=…`): `deleted` for an entry that left (a
   * tombstone: identifier, type, url and updatedAt only), else `active` (the MCP registry's words).
   */
  readonly status?: 'active' | 'deleted';
  readonly score?: number;
  /** The registry (API base URL) that answered with this entry. */
  readonly source?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly extensions?: Readonly<Record<string, unknown>>;
  readonly [key: string]: unknown;
}

/** A registry the client may ask itself (`federation: referrals`): an AI Catalog entry of type {@link AI_REGISTRY_MEDIA_TYPE}. */
export interface ArdReferral {
  readonly identifier: string;
  readonly displayName: string;
  readonly type: string;
  readonly url: string;
  readonly description?: string;
}

/** The answer of `POST /search`. */
export interface ArdSearchResponse {
  readonly results: readonly ArdSearchResult[];
  readonly referrals?: readonly ArdReferral[];
  /** Absent on the last page. */
  readonly pageToken?: string;
  /**
   * Our extension, with `federation: auto`: which registries were asked and how each answered.
   * The OpenAPI `SearchResponse` admits no other member, so the service sends it in the
   * `A2A-Discovery-Federation` response header (JSON), never in the body.
   */
  readonly federation?: ArdFederationReport;
}

/**
 * What a `federation: auto` search did (our extension, docs/registry-api.md "Federation"): every
 * known registry with its outcome, and the results dropped as duplicates of an identifier
 * already in the answer. A registry that failed never fails the search.
 */
export interface ArdFederationReport {
  readonly registries: readonly {
    /** The registry's API base. */
    readonly url: string;
    readonly name?: string;
    /**
     * `answered`; `failed` (an error, a status other than 200, an answer that is not a search
     * response); `timeout` (the per-request or the overall deadline); `refused` (not on the
     * allowlist, or this registry itself); `skipped` (past the bound on registries asked).
     */
    readonly outcome: 'answered' | 'failed' | 'timeout' | 'refused' | 'skipped';
    /** Results taken from it (after de-duplication). */
    readonly results?: number;
    /** Why it failed, timed out or was refused. */
    readonly message?: string;
  }[];
  /** Results dropped because an earlier one (ours first, then the registries in order) has the same identifier. */
  readonly duplicates?: readonly { readonly identifier: string; readonly kept: string; readonly dropped: string }[];
}

/** `POST /explore` (ARD §7.3). */
export interface ArdExploreRequest {
  readonly query?: ArdQuery;
  readonly resultType: { readonly facets: readonly { readonly field: string; readonly limit?: number; readonly minCount?: number }[] };
}

/** The answer of `POST /explore`. */
export interface ArdExploreResponse {
  readonly resultType: 'facets';
  readonly facets: Readonly<Record<string, { readonly buckets: readonly { readonly value: string; readonly count?: number }[]; readonly otherCount?: number }>>;
}

/** The answer of `GET /agents` (ARD §7.4, the OpenAPI `ListResponse`): entries in a deterministic order. */
interface ArdListResponse {
  readonly items: readonly ArdSearchResult[];
  /** Entries matching in all, when the registry counts them. */
  readonly total?: number;
  readonly pageToken?: string;
}

/**
 * The change feed (our extension of `GET /agents`, after the MCP registry's `updated_since`):
 * `GET /agents?updated_since=<cursor or ISO 8601 time>` answers the entries changed since, in
 * change order, removals as `status: "deleted"` tombstones, paged by `pageToken`; the last page
 * carries `cursor`, the value to pass as `updated_since` next time. A cursor older than the
 * tombstones kept answers 410 (`CURSOR_EXPIRED`): read everything again.
 */
export interface ArdChangesResponse extends ArdListResponse {
  /** On the last page: pass as `updated_since` to read only what changes after it. */
  readonly cursor?: string;
}

/** An error answer (ARD Appendix B, the OpenAPI `Error`): an upper-case code and a sentence. */
export interface ArdError {
  readonly errorCode: 'INVALID_ARGUMENT' | 'UNAUTHENTICATED' | 'NOT_FOUND' | 'RATE_LIMIT_EXCEEDED' | 'INTERNAL_ERROR' | 'CURSOR_EXPIRED' | string;
  readonly message: string;
}

/** The extension key under which our registry says what it verified about an entry. */
export const VERIFIED_EXTENSION = 'dev.a2a-discovery.verified';

/**
 * What this registry verified about an entry (`extensions["dev.a2a-discovery.verified"]` of a
 * search, list or catalog entry): it lists only cards it fetched under its allowlist, validated,
 * checked for signatures and keeps revalidating.
 */
export interface ArdVerified {
  /** Whether the agent is in the current snapshot (selected for the configured needs). */
  readonly inSnapshot: boolean;
  /** The snapshot's local name when it is in it. */
  readonly localName?: string;
  /** The endpoint's verdict (`selected`, `excluded`, `unsuitable`, …) and its reason. */
  readonly verdict?: string;
  readonly reason?: string;
  /** What caused the verdict, in the vocabulary of docs/vocabulary.md (`lookalike`, `credentials`, …), when one did. */
  readonly cause?: string;
  /** `healthy`, `degraded`, `unhealthy`, … as the endpoint views say. */
  readonly health?: string;
  /** `verified`, `unsigned`, `invalid`, … as the card's signature check said. */
  readonly signature?: string;
  /** A2A protocol version of the card (`1.0`, `0.3`, `0.2`). */
  readonly protocolVersion?: string;
  /** `public` or `extended` (for which identity). */
  readonly cardKind?: string;
  /** The sources that proposed the endpoint (`static`, `partners`, …), with what they said. */
  readonly provenance?: readonly { readonly source: string; readonly name?: string }[];
  /** The endpoint key (base URL or card URL) the entry comes from. */
  readonly endpoint: string;
  /** When the card last changed (ISO 8601). */
  readonly cardChangedAt?: string;
  /** The card's input modes (its defaults and its skills'), for filters (`verified.inputModes`). */
  readonly inputModes?: readonly string[];
  /** The card's output modes (its defaults and its skills'), for filters (`verified.outputModes`). */
  readonly outputModes?: readonly string[];
  /** The card's `provider.organization` (card text), for filters (`verified.provider`). */
  readonly provider?: string;
  /** Set when the name or identifier is confusingly like another origin's agent. */
  readonly lookalike?: { readonly of: string; readonly origin: string; readonly reason: string };
}
