/**
 * The well-known source: a list of partner domains, each proposed as `https://<domain>/`. The
 * card cache then fetches `/.well-known/agent-card.json` under it; this source itself does no
 * I/O, so its list is known from the start and a refresh never fails. To read a domain's AI
 * Catalog first (at `/.well-known/ard.json`, then `/.well-known/ai-catalog.json`, or where the
 * domain announces it: a `Link: rel="ard"` or `rel="ai-catalog"` header, an HTML `<link>`, a
 * robots.txt `Agentmap:` line), give the domains to
 * `aiCatalogSource({ domains })` instead (the service's `wellKnown.catalogFirst`).
 *
 * @module
 */
import type { Clock } from '../clock/index.js';
import { normalizeDomain } from '../rules/domains.js';
import { describe } from '../text.js';
import { FixedListSource, OptionProblems } from './source-core.js';
import type { EndpointRecord, Source } from './types.js';

/** Inputs of {@link wellKnownSource}. */
export interface WellKnownSourceOptions {
  /** Source id, e.g. `'partners'`. */
  id: string;
  /**
   * Host names, optionally with a port: `'agents.partner.example'`, `'partner.example:8443'`.
   * No scheme, path, user info, query or fragment. Internationalized names are converted to
   * ASCII (punycode).
   */
  domains: readonly string[];
  /** Suggested poll interval in ms (the list never changes, so only the loop's cadence matters). */
  pollIntervalMs?: number;
  /** For `updatedAt`. Default the system clock. */
  clock?: Clock;
}

/**
 * Creates the well-known source. Pure: validates every domain and does no I/O.
 *
 * Records: `name` = the domain as normalized by `new URL()` (lower case, ASCII, default port
 * dropped), `baseUrl` = `https://<domain>/`, `metadata` = `{ domain }`.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) listing every bad or duplicate
 *   domain at its path (`domains[3]`).
 * @example
 * wellKnownSource({ id: 'partners', domains: ['agents.partner.example'] }).current().records[0].baseUrl
 * // 'https://agents.partner.example/'
 */
export function wellKnownSource(options: WellKnownSourceOptions): Source {
  const check = new OptionProblems('well-known source');
  const opts = (options ?? {}) as Partial<WellKnownSourceOptions>;
  const id = check.id(opts.id);
  const pollIntervalMs = check.positiveInt(opts.pollIntervalMs, 'pollIntervalMs');
  const records: EndpointRecord[] = [];
  if (!Array.isArray(opts.domains)) check.add('domains', `must be an array of domain names, got ${describe(opts.domains)}`);
  else {
    const seen = new Map<string, number>();
    opts.domains.forEach((raw: unknown, i) => {
      const path = `domains[${i}]`;
      const host = normalizeDomain(raw);
      if (typeof host !== 'string') return check.add(path, host.problem);
      const first = seen.get(host);
      if (first !== undefined) return check.add(path, `duplicate of domains[${first}] (${host})`);
      seen.set(host, i);
      records.push({ name: host, baseUrl: `https://${host}/`, source: id, metadata: { domain: host } });
    });
  }
  check.throwIfAny();
  return new FixedListSource(id, 'well-known', records, { clock: opts.clock, pollIntervalMs });
}
