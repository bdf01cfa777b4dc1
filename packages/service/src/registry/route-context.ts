/**
 * What every route of the ARD registry API shares: the context built once by `mountRegistry`
 * (registry/routes.ts) and handed to each route group, and the readers of a request that answer
 * ARD's error shape (Appendix B) when a part of it is refused, counting the refusal.
 *
 * @module
 */
import type { Context } from 'hono';
import type { ServerRegistryConfig } from 'a2a-discovery/config';
import type { ArdError, ArdSearchRequest, ArdSearchResponse } from 'a2a-discovery/internal';
import type { OnRefusal } from '../http/limits.js';
import type { RouteToolkit } from '../http/route.js';
import { readObjectBody } from '../http/validate.js';
import type { ParsedFilter } from './filter.js';
import { parseFilter } from './filter.js';
import type { PageTokens } from './page-token.js';
import type { RegistryIndex } from './registry-index.js';
import { queryTerms } from './registry-index.js';

/** Where the registry API lives: the `url` a catalog's `application/ai-registry+json` entry gives. */
export const REGISTRY_BASE = '/api/registry';

/** Asks other registries (`federation` `auto` or `referrals`); default: the local answer with `referrals: []`. */
export type Federate = (request: ArdSearchRequest, local: ArdSearchResponse) => Promise<ArdSearchResponse>;

/** Wraps the heavy part of a registry request (see `RegistryApiOptions.heavy` in registry/routes.ts). */
export type HeavyWork = (c: Context, kind: 'search' | 'explore', work: () => Promise<Response>) => Promise<Response>;

/** What the registry's route groups share, built once when the routes are mounted. */
export interface RegistryRouteContext {
  readonly index: RegistryIndex;
  readonly settings: ServerRegistryConfig;
  /** Wall clock, epoch ms. */
  readonly now: () => number;
  /** Counts a refusal (`a2a_discovery_http_refusals_total`). */
  readonly refuse: OnRefusal;
  /** The page tokens of every route (one key, so a token opens only here). */
  readonly tokens: PageTokens;
  /** The seam of the heavy part of a search or an explore. */
  readonly heavy: HeavyWork;
  /** The route declarations of the app (http/route.ts). */
  readonly route: RouteToolkit['route'];
  /** The federation hook of the search; none: the local answer with `referrals: []`. */
  readonly federate?: Federate;
}

/** A search's or explore's `query`: its text, if any, and its parsed filter. */
export interface ReadQuery {
  readonly text?: string;
  readonly filter: ParsedFilter;
}

/** Answers ARD's error shape (Appendix B) with `status`. */
export function fail(c: Context, status: 400 | 410 | 413, code: string, message: string): Response {
  return c.json({ errorCode: code, message } satisfies ArdError, status);
}

/** Answers a 400 `INVALID_ARGUMENT`, counting the refusal under `reason` when one is given. */
export function invalid(ctx: RegistryRouteContext, c: Context, reason: Parameters<OnRefusal>[0] | undefined, message: string): Response {
  if (reason !== undefined) ctx.refuse(reason);
  return fail(c, 400, 'INVALID_ARGUMENT', message);
}

/** Reads the JSON body of a `POST` under `maxBodyBytes` (empty: `{}`), or answers the 413 or the 400 in ARD's shape. */
export async function readBody(ctx: RegistryRouteContext, c: Context): Promise<Record<string, unknown> | Response> {
  const limit = { maxBytes: () => ctx.settings.maxBodyBytes, key: 'server.registry.maxBodyBytes', onTooLarge: () => ctx.refuse('registry_body_bytes') };
  return readObjectBody(c, limit, (c, status, message) => fail(c, status, 'INVALID_ARGUMENT', message));
}

/** Reads `query.text` and `query.filter` within the registry's limits, or answers the 400. */
export function readQuery(ctx: RegistryRouteContext, c: Context, raw: unknown, textRequired: boolean): ReadQuery | Response {
  const s = ctx.settings;
  if (raw === undefined && !textRequired) return { filter: [] };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return invalid(ctx, c, undefined, textRequired ? 'query is required: {"query": {"text": "…"}}' : 'query must be an object');
  const q = raw as Record<string, unknown>;
  const text = q['text'];
  if (text !== undefined && typeof text !== 'string') return invalid(ctx, c, undefined, 'query.text must be a string');
  if (textRequired && (text === undefined || text.trim() === '')) return invalid(ctx, c, undefined, 'query.text is required for search');
  if (text !== undefined && text.length > s.maxTextLength) return invalid(ctx, c, 'registry_text', `query.text is ${text.length} characters; at most ${s.maxTextLength} are accepted (server.registry.maxTextLength)`);
  const terms = text === undefined ? 0 : queryTerms(text).length;
  if (terms > s.maxQueryTerms) return invalid(ctx, c, 'registry_terms', `query.text has ${terms} distinct terms; at most ${s.maxQueryTerms} are accepted (server.registry.maxQueryTerms)`);
  const filter = parseFilter(q['filter'], { maxKeys: s.maxFilterKeys, maxValues: s.maxFilterValues });
  if (typeof filter === 'string') return invalid(ctx, c, 'registry_filter', filter);
  return { ...(text !== undefined && { text }), filter };
}

/**
 * Reads `pageSize` as given (`undefined`: the default), or answers the 400: in a JSON body a
 * number (`"10"` is refused, as any string), in a query string digits only.
 */
export function readPageSize(ctx: RegistryRouteContext, c: Context, raw: unknown, fallback: number, from: 'body' | 'query'): number | Response {
  const s = ctx.settings;
  if (raw === undefined) return Math.min(fallback, s.maxPageSize);
  if (from === 'body' && typeof raw !== 'number') return invalid(ctx, c, 'registry_page_size', `pageSize must be a positive integer (a JSON number), not ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : `a ${typeof raw}`}`);
  if (from === 'query' && (typeof raw !== 'string' || !/^\d{1,6}$/.test(raw))) return invalid(ctx, c, 'registry_page_size', 'pageSize must be a positive integer (digits only)');
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) return invalid(ctx, c, 'registry_page_size', 'pageSize must be a positive integer');
  if (n > s.maxPageSize) return invalid(ctx, c, 'registry_page_size', `pageSize ${n} is larger than ${s.maxPageSize} (server.registry.maxPageSize)`);
  return n;
}

/** Opens `pageToken` when it continues the request `hash` of this `kind`: its payload (undefined without one), or the 400. */
export function readToken(ctx: RegistryRouteContext, c: Context, raw: unknown, kind: string, hash: string): Record<string, unknown> | undefined | Response {
  const s = ctx.settings;
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string') return invalid(ctx, c, 'registry_page_token', 'pageToken must be a string');
  if (raw.length > s.maxPageTokenBytes) return invalid(ctx, c, 'registry_page_token', `pageToken is longer than ${s.maxPageTokenBytes} characters (server.registry.maxPageTokenBytes)`);
  const opened = ctx.tokens.open(raw);
  if (!opened.ok) return invalid(ctx, c, 'registry_page_token', opened.reason);
  if (opened.payload['k'] !== kind || opened.payload['q'] !== hash) return invalid(ctx, c, 'registry_page_token', 'the pageToken belongs to another request: repeat the same query with it');
  return opened.payload;
}
