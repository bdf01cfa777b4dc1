/**
 * Selection: from candidates (an admitted endpoint with a usable cached card) to the agents a
 * tree may use, with local names and reviewed descriptions from our configuration — never from
 * the card. Applies needs, required capabilities, the tenant policy, name rules and the cap;
 * every decision is deterministic (same inputs, same output, same order).
 */
import type { CacheEntry } from '../cache/index.js';
import { cardFacts, cardIdentity, passingCard } from '../cache/cache-entries.js';
import type { InterfaceRewrite } from '../card/index.js';
import { checkSecurityRequirements, reviewedInterface, securityOrigin } from '../card/index.js';
import { transportOf } from '../sources/transport-options.js';
import type { PresentableScheme } from '../fetch/index.js';
import type { AdmittedEndpoint } from '../resolve/index.js';
import type { EndpointCause } from '../health/index.js';
import type { CardMatch, Need, RequiredCapabilities, TagVocabulary } from './match-card.js';
import { matchByRoutingTags, matchCard, matchUntaggedCard } from './match-card.js';
import { isLocalName, LOCAL_NAME, sortByLocalNameSteps } from '../local-name.js';
import { runPaced, runSteps, sortSteps, type Pacer } from '../clock/pacer.js';
import { compareCodeUnits } from '../text.js';

/** The local-name rule ({@link LOCAL_NAME}) and ADK's reserved names, re-exported here for the public API. */
export { LOCAL_NAME,  } from '../local-name.js';

/** A static, reviewed agent from configuration. */
export interface ReviewedAgent {
  /** Id of the static source that configured it: only its records carry this identity. */
  readonly source: string;
  readonly name: string;
  readonly description: string;
  readonly tags: readonly string[];
  /**
   * True when `tags` are the entry's `routingTags`: the agent is routed by them whatever its
   * card's skills are tagged, and its card is judged on its skills' modes only (required
   * capabilities still apply). False or absent: a skill of the card must carry the tag.
   */
  readonly byRoutingTags?: boolean;
  readonly critical: boolean;
}

export interface TenantPolicy {
  /** Provider organizations (exact, case-insensitive) the tenant may use; unset = any. */
  readonly providers?: readonly string[];
  /** Hosts (exact, or `*.example.com`) the tenant may use; unset = any allowlisted host. */
  readonly hosts?: readonly string[];
}

/**
 * A routing domain: a group of reviewed tags served by one sub-router. With domains, each agent
 * goes to the first domain (in this order) that lists one of its tags, and the cap applies per
 * domain; the root holds one sub-router per domain.
 */
export interface RoutingDomain {
  /** The sub-router's agent name (a local name; no agent may use it). */
  readonly name: string;
  /** Reviewed text. */
  readonly description: string;
  readonly tags: readonly string[];
  /** Most agents under this sub-router. */
  readonly maxAgents: number;
}

export interface SelectOptions {
  readonly needs: readonly Need[];
  readonly vocabulary: TagVocabulary;
  readonly required?: RequiredCapabilities;
  readonly tenant?: TenantPolicy;
  /** Most agents in one tree (with `domains`: sub-routers under the root). Default 16. */
  readonly maxAgents?: number;
  /** Routing domains, in configuration order: two-level trees with a cap per domain. */
  readonly domains?: readonly RoutingDomain[];
  /** Static agents by local name, in configuration order (their order breaks ties). */
  readonly reviewed?: readonly ReviewedAgent[];
  /**
   * Remembers match results per (frozen) card between calls made with the same needs, vocabulary
   * and required capabilities — the discovery loop passes one, so unchanged cards are not matched
   * again every cycle. Never share one between different options.
   */
  readonly memo?: MatchMemo;
  /**
   * Base URLs of static agents whose card once fitted their entry: an unsuitable one "no longer
   * fits", any other "does not fit". Selection adds to it; its owner (the discovery loop) deletes
   * an endpoint's URL when the endpoint leaves. Without it, an unsuitable static agent "does not fit".
   */
  readonly fitted?: Set<string>;
  /**
   * The card security schemes the configured credentials can present to an origin (exact,
   * `https://host[:port]`). When given, an agent whose card requires what cannot be presented to
   * its chosen interface's origin is excluded, the reason naming what the card needs
   * (`unauthorized: needs oauth2 client credentials for https://…`). The discovery loop always
   * passes one (nothing can be presented when it has no credentials).
   */
  readonly presentable?: (origin: string) => readonly PresentableScheme[];
  /** Base URLs kept out of the selection, with the reason (the discovery loop's `lookalikes: exclude`). */
  readonly excluded?: ReadonlyMap<string, string>;
}

/**
 * Match results by card (the object standing for its accepted bytes: the same across
 * revalidations, and while the cache rebuilds a model it held weakly), then by the needs they
 * were computed for: one shared {@link MemoSlot} for the one needs key most cards are matched
 * for, a map once a card is matched for a second.
 */
export type MatchMemo = WeakMap<object, MemoSlot | Map<string, CardMatch>>;

/** A needs key and its match, shared by every card with that result (interned: a memo entry per card is all a card costs). */
interface MemoSlot {
  readonly key: string;
  readonly match: CardMatch;
}

export interface Candidate {
  readonly endpoint: AdmittedEndpoint;
  readonly entry: CacheEntry;
}

export interface SelectedAgent {
  readonly localName: string;
  /** Reviewed text: the static entry's, or composed from the vocabulary's descriptions. */
  readonly description: string;
  /** Reviewed tags this agent serves (for the router). */
  readonly tags: readonly string[];
  /**
   * Present when its static entry routes it by `routingTags`: the card's own skill tags (distinct,
   * sorted, possibly empty), shown but not used. `tags` then come from the entry alone.
   */
  readonly cardTags?: readonly string[];
  /**
   * Present when its static entry's `interfaceUrl` replaced its card's chosen interface, whose
   * host was unroutable (`0.0.0.0`, `::`): what was replaced by what. Its remote agent calls `to`.
   */
  readonly interfaceRewritten?: Omit<InterfaceRewrite, 'index'>;
  readonly critical: boolean;
  /** With domains: the domain (sub-router) holding it. */
  readonly domain?: string;
  readonly baseUrl: string;
  readonly sources: readonly string[];
  /** The `urn:air:` identifier an AI Catalog gave the endpoint (the first proposing record's), kept for our own catalog. */
  readonly identifier?: string;
  readonly entry: CacheEntry;
}

export type Verdict =
  | { readonly verdict: 'selected'; readonly localName: string }
  | { readonly verdict: 'unsuitable' | 'excluded'; readonly localName?: string; readonly reason: string; readonly cause: EndpointCause };

interface SelectionAlert {
  readonly kind: 'cap-reached' | 'name-collision' | 'invalid-name' | 'unknown-tags' | 'static-unsuitable' | 'unauthorized' | 'interface-url-unused';
  readonly message: string;
  readonly endpoint?: string;
}

export interface Selection {
  /** Sorted by local name. */
  readonly selected: readonly SelectedAgent[];
  readonly verdicts: ReadonlyMap<string, Verdict>;
  readonly alerts: readonly SelectionAlert[];
}

/**
 * The documented rule for local names of discovered agents (static agents use their configured
 * name): take the source record's name, keep its last `/` segment (`default/warranty-agent` →
 * `warranty-agent`), lower-case it, turn every run of other characters into `_`, trim `_`,
 * prefix `a_` when it does not start with a letter, and cut to 48 characters.
 *
 * @example deriveLocalName('default/Warranty-Agent') // 'warranty_agent'
 * @example deriveLocalName('agents.example.com') // 'agents_example_com'
 */
export function deriveLocalName(recordName: string): string {
  const last = recordName.split('/').filter(Boolean).pop() ?? recordName;
  let name = last.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  if (!/^[a-z]/.test(name)) name = `a_${name}`;
  name = name.slice(0, 48).replace(/_+$/, '');
  return name.length >= 2 ? name : `${name}_agent`;
}

/** Selects agents; see the module comment. */
export function selectAgents(candidates: readonly Candidate[], options: SelectOptions): Selection {
  return runSteps(selectionSteps(candidates, options));
}

/**
 * {@link selectAgents} in slices: the same selection, the candidates matched between `pacer`
 * ticks (a first evaluation of 100,000 candidates rebuilds and matches every card's model).
 */
export function selectAgentsPaced(candidates: readonly Candidate[], options: SelectOptions, pacer: Pacer): Promise<Selection> {
  return runPaced(selectionSteps(candidates, options), pacer);
}

/**
 * Candidates judged between two yields of {@link selectionSteps}: a candidate whose card's model
 * the collector took builds it again first (about a millisecond at 100,000 agents).
 */
const CANDIDATES_PER_STEP = 16;

/** Reviewed agents read between two yields of {@link selectionSteps} (100,000 static agents hold the loop about 80 ms). */
const REVIEWED_PER_STEP = 1024;

/** The selection, yielding every {@link CANDIDATES_PER_STEP} candidates (where a paced caller lets the event loop run). */
function* selectionSteps(candidates: readonly Candidate[], options: SelectOptions): Generator<void, Selection> {
  const verdicts = new Map<string, Verdict>();
  const alerts: SelectionAlert[] = [];
  const reviewedByName = new Map<string, ReviewedAgent & { order: number }>();
  let judged = 0;
  for (const [i, r] of (options.reviewed ?? []).entries()) {
    if (++judged % REVIEWED_PER_STEP === 0) yield;
    reviewedByName.set(r.name, { ...r, order: i });
  }
  const maxAgents = options.maxAgents ?? 16;
  const domains = options.domains ?? [];
  const domainNames = new Set(domains.map((d) => d.name));

  interface Eligible {
    localName: string;
    description: string;
    tags: readonly string[];
    cardTags?: readonly string[];
    interfaceRewritten?: Omit<InterfaceRewrite, 'index'>;
    critical: boolean;
    order: number; // static order, or Infinity for discovered agents
    candidate: Candidate;
  }
  const eligible: Eligible[] = [];

  judged = 0;
  for (const candidate of candidates) {
    if (++judged % CANDIDATES_PER_STEP === 0) yield;
    const { endpoint, entry } = candidate;
    // Only a record from the source that configured the reviewed agent carries its identity: a
    // registry or label record that merely uses the same name gets nothing from it.
    const staticRecord = endpoint.records.find((r) => reviewedByName.get(r.name)?.source === r.source);
    const reviewed = staticRecord ? reviewedByName.get(staticRecord.name) : undefined;
    const localName = reviewed ? reviewed.name : deriveLocalName(endpoint.records[0]!.name);

    const kept = options.excluded?.get(endpoint.baseUrl);
    if (kept !== undefined) {
      verdicts.set(endpoint.baseUrl, { verdict: 'excluded', localName, reason: kept, cause: 'lookalike' });
      continue;
    }
    const tenantRefusal = tenantRefuses(options.tenant, entry, endpoint.baseUrl);
    if (tenantRefusal) {
      verdicts.set(endpoint.baseUrl, { verdict: 'excluded', localName, reason: tenantRefusal, cause: 'tenant' });
      continue;
    }
    // An interface nobody can call (0.0.0.0, ::) is replaced only by a static entry's interfaceUrl
    // (card/interface-policy.ts, the same rule the remote agent applies).
    // Only a card with such an interface, or an entry with interfaceUrl, needs its model for it.
    const routed = cardFacts(entry).unroutable || transportOf(endpoint.records)?.interfaceUrl !== undefined ? calledCard(candidate) : undefined;
    if (routed?.kind === 'unroutable') {
      const reason = `${routed.reason}; ${reviewed ? 'set interfaceUrl on its static entry to the URL where the agent answers' : 'only a static entry with interfaceUrl can say where the agent answers'}`;
      verdicts.set(endpoint.baseUrl, { verdict: 'unsuitable', localName, reason, cause: 'unroutable' });
      if (reviewed) alerts.push({ kind: 'static-unsuitable', endpoint: endpoint.baseUrl, message: `static agent ${localName} does not fit: ${reason}` });
      continue;
    }
    if (routed?.kind === 'as-is' && routed.unused !== undefined) {
      alerts.push({ kind: 'interface-url-unused', endpoint: endpoint.baseUrl, message: `${localName}: ${routed.unused}` });
    }
    // Credentials are judged for the interface actually called (a rewritten one included).
    const unauthorized = securityRefuses(options.presentable, entry, routed?.card, endpoint.baseUrl);
    if (unauthorized !== undefined) {
      verdicts.set(endpoint.baseUrl, { verdict: 'excluded', localName, reason: unauthorized, cause: 'credentials' });
      alerts.push({ kind: 'unauthorized', endpoint: endpoint.baseUrl, message: `${localName}: ${unauthorized}` });
      continue;
    }
    // A static agent is held to the tags it is expected to serve; a discovered one to every need.
    const needs = reviewed ? options.needs.filter((n) => reviewed.tags.includes(n.tag)).concat(needsFor(reviewed.tags, options.needs)) : options.needs;
    // A static entry's routingTags route the agent whatever its card's tags; an entry's tags
    // vouch for a card no skill of which carries a tag (no skills, or skills with `tags: []`).
    const byRoutingTags = reviewed?.byRoutingTags === true;
    const matcher = byRoutingTags ? matchByRoutingTags : reviewed !== undefined && cardFacts(entry).untagged ? matchUntaggedCard : matchCard;
    const memoKey = reviewed ? `${byRoutingTags ? 'routing' : 'static'}:${reviewed.tags.join(',')}` : '*';
    // Matched once per card and needs: the model built for it is not kept (it would outlive young collections).
    const match = memoizedMatch(options.memo, cardIdentity(entry), memoKey, () => matcher(passingCard(entry), needs, options.vocabulary, options.required));
    if (match.unknownTags.length > 0) {
      alerts.push({ kind: 'unknown-tags', endpoint: endpoint.baseUrl, message: `${localName}: tags outside the reviewed vocabulary are ignored: ${match.unknownTags.join(', ')}` });
    }
    if (match.satisfied.length === 0) {
      const reason = match.reasons.join('; ');
      verdicts.set(endpoint.baseUrl, { verdict: 'unsuitable', localName, reason, cause: 'no-match' });
      if (reviewed) {
        const fits = options.fitted?.has(endpoint.baseUrl) === true ? 'no longer fits' : 'does not fit';
        alerts.push({ kind: 'static-unsuitable', endpoint: endpoint.baseUrl, message: `static agent ${localName} ${fits}: ${reason}` });
      }
      continue;
    }
    if (reviewed) options.fitted?.add(endpoint.baseUrl);
    // The memoized match's own list when it has no duplicate (one list per card, not one per selection).
    const tags = new Set(match.satisfied).size === match.satisfied.length ? match.satisfied : [...new Set(match.satisfied)];
    eligible.push({
      localName,
      description: reviewed ? reviewed.description : describeFromVocabulary(tags, options.vocabulary),
      tags,
      ...(byRoutingTags && { cardTags: cardTagsOf(entry.card) }),
      ...(routed?.kind === 'rewritten' && { interfaceRewritten: Object.freeze({ from: routed.rewrite.from, to: routed.rewrite.to }) }),
      critical: reviewed?.critical ?? false,
      order: reviewed ? reviewed.order : Number.POSITIVE_INFINITY,
      candidate,
    });
  }

  // Names: reserved and malformed names are refused; on a collision static agents win, then
  // the smaller base URL (candidates arrive sorted by base URL).
  yield;
  const ordered = yield* sortSteps(eligible, (a, b) => byOrder(a, b) || compareCodeUnits(a.candidate.endpoint.baseUrl, b.candidate.endpoint.baseUrl));
  const byName = new Map<string, Eligible>();
  for (const e of ordered) {
    if (++judged % CANDIDATES_PER_STEP === 0) yield;
    const url = e.candidate.endpoint.baseUrl;
    if (!isLocalName(e.localName)) {
      verdicts.set(url, { verdict: 'excluded', localName: e.localName, reason: `local name ${JSON.stringify(e.localName)} is reserved or does not match ${LOCAL_NAME}`, cause: 'name' });
      alerts.push({ kind: 'invalid-name', endpoint: url, message: `${url}: local name ${JSON.stringify(e.localName)} is not usable` });
      continue;
    }
    if (domainNames.has(e.localName)) {
      const reason = `local name ${e.localName} is the name of a routing domain's sub-router`;
      verdicts.set(url, { verdict: 'excluded', localName: e.localName, reason, cause: 'name' });
      alerts.push({ kind: 'name-collision', endpoint: url, message: `${url}: ${reason}; give this endpoint a static entry with its own name` });
      continue;
    }
    if (e.order === Number.POSITIVE_INFINITY && reviewedByName.has(e.localName)) {
      // Reviewed names are reserved for their own endpoints, even while those are absent.
      const reason = `local name ${e.localName} belongs to a reviewed agent`;
      verdicts.set(url, { verdict: 'excluded', localName: e.localName, reason, cause: 'name' });
      alerts.push({ kind: 'name-collision', endpoint: url, message: `${url}: ${reason}; give this endpoint a static entry with its own name` });
      continue;
    }
    const first = byName.get(e.localName);
    if (first) {
      const reason = `local name ${e.localName} is already used by ${first.candidate.endpoint.baseUrl}`;
      verdicts.set(url, { verdict: 'excluded', localName: e.localName, reason, cause: 'name' });
      alerts.push({ kind: 'name-collision', endpoint: url, message: `${url}: ${reason}; give one of them a static entry with its own name` });
      continue;
    }
    byName.set(e.localName, e);
  }

  // The cap: critical first, then configured order, then by name. With domains, each agent goes
  // to the first domain listing one of its tags, and each domain keeps its own cap.
  // Sorted by name first: the rank then only moves the few critical and configured agents, and
  // the discovered ones (alike in both) stay in name order without a comparison of names.
  yield;
  const byLocalName = yield* sortByLocalNameSteps([...byName.values()]);
  const ranked = yield* sortSteps(byLocalName, (a, b) => Number(b.critical) - Number(a.critical) || byOrder(a, b));
  let kept: Array<Eligible & { domain?: string }> = [];
  if (domains.length === 0) {
    kept = ranked.slice(0, maxAgents);
    const dropped = ranked.slice(maxAgents);
    for (const d of dropped) {
      if (++judged % CANDIDATES_PER_STEP === 0) yield;
      verdicts.set(d.candidate.endpoint.baseUrl, { verdict: 'excluded', localName: d.localName, reason: `the cap of ${maxAgents} agents per tree was reached`, cause: 'cap' });
    }
    if (dropped.length > 0) {
      alerts.push({ kind: 'cap-reached', message: `the cap of ${maxAgents} agents per tree left out: ${listed(dropped.map((d) => d.localName))}` });
    }
  } else {
    const count = new Map<string, number>();
    const dropped = new Map<string, string[]>();
    for (const e of ranked) {
      if (++judged % CANDIDATES_PER_STEP === 0) yield;
      const domain = domains.find((d) => e.tags.some((t) => d.tags.includes(t)));
      const url = e.candidate.endpoint.baseUrl;
      if (!domain) {
        verdicts.set(url, { verdict: 'excluded', localName: e.localName, reason: `no routing domain lists any of its tags (${e.tags.join(', ')})`, cause: 'cap' });
        continue;
      }
      const n = count.get(domain.name) ?? 0;
      if (n >= domain.maxAgents) {
        verdicts.set(url, { verdict: 'excluded', localName: e.localName, reason: `the cap of ${domain.maxAgents} agents in domain ${domain.name} was reached`, cause: 'cap' });
        dropped.set(domain.name, [...(dropped.get(domain.name) ?? []), e.localName]);
        continue;
      }
      count.set(domain.name, n + 1);
      kept.push({ ...e, domain: domain.name });
    }
    for (const [name, left] of dropped) {
      const cap = domains.find((d) => d.name === name)!.maxAgents;
      alerts.push({ kind: 'cap-reached', message: `the cap of ${cap} agents in domain ${name} left out: ${listed(left)}` });
    }
  }
  const selected: SelectedAgent[] = [];
  for (const e of kept) {
    if (++judged % CANDIDATES_PER_STEP === 0) yield;
    verdicts.set(e.candidate.endpoint.baseUrl, { verdict: 'selected', localName: e.localName });
    const identifier = airIdentifier(e.candidate.endpoint.records);
    selected.push(
      Object.freeze({
        localName: e.localName,
        description: e.description,
        tags: Object.freeze(e.tags),
        ...(e.cardTags !== undefined && { cardTags: e.cardTags }),
        ...(e.interfaceRewritten !== undefined && { interfaceRewritten: e.interfaceRewritten }),
        critical: e.critical,
        ...(e.domain !== undefined && { domain: e.domain }),
        baseUrl: e.candidate.endpoint.baseUrl,
        sources: e.candidate.endpoint.sources,
        ...(identifier !== undefined && { identifier }),
        entry: e.candidate.entry,
      }),
    );
  }
  yield;
  return { selected: Object.freeze(yield* sortByLocalNameSteps(selected)), verdicts, alerts: Object.freeze(alerts) };
}

/**
 * The publisher-authorized `urn:air:` identifier of the first record carrying one: the AI Catalog
 * specification asks a catalog that projects the entry to keep it (our own catalog does).
 */
function airIdentifier(records: readonly { readonly metadata: Readonly<Record<string, string>> }[]): string | undefined {
  for (const r of records) {
    const id = r.metadata['identifier'];
    if (id !== undefined && id.startsWith('urn:air:')) return id;
  }
  return undefined;
}

/** A card's own skill tags, distinct and sorted (frozen). */
function cardTagsOf(card: CacheEntry['card']): readonly string[] {
  return Object.freeze([...new Set(card.skills.flatMap((s) => s.tags))].sort(compareCodeUnits));
}

/**
 * The card as its remote agent will call it: its chosen interface replaced by the endpoint's
 * `interfaceUrl` when that interface's host is unroutable (`reviewedInterface`), of the endpoint's
 * `tenant` (both from the transport options the snapshot carries).
 */
export function calledCard(candidate: Candidate): ReturnType<typeof reviewedInterface> {
  const transport = transportOf(candidate.endpoint.records);
  return reviewedInterface(candidate.entry.card, {
    ...(transport?.interfaceUrl !== undefined && { interfaceUrl: transport.interfaceUrl }),
    ...(transport?.tenant !== undefined && { tenant: transport.tenant }),
  });
}

function memoizedMatch(memo: MatchMemo | undefined, card: object, key: string, compute: () => CardMatch): CardMatch {
  if (!memo) return compute();
  const held = memo.get(card);
  if (held === undefined) {
    const match = compute();
    memo.set(card, memoSlot(key, match));
    return match;
  }
  if (!(held instanceof Map)) {
    if (held.key === key) return held.match;
    const match = compute();
    memo.set(card, new Map([[held.key, held.match], [key, match]]));
    return match;
  }
  let match = held.get(key);
  if (!match) held.set(key, (match = compute()));
  return match;
}

/** Interned memo slots by needs key, then by match (a match is interned too: see `held` in match-card.ts). */
const memoSlots = new Map<string, WeakMap<CardMatch, MemoSlot>>();
/** Distinct needs keys interned at most (a fleet has a handful: one per distinct static tag list, and `*`). */
const MEMO_KEYS = 1_024;

function memoSlot(key: string, match: CardMatch): MemoSlot {
  let byMatch = memoSlots.get(key);
  if (byMatch === undefined) {
    if (memoSlots.size >= MEMO_KEYS) memoSlots.clear();
    memoSlots.set(key, (byMatch = new WeakMap()));
  }
  let slot = byMatch.get(match);
  if (slot === undefined) byMatch.set(match, (slot = Object.freeze({ key, match })));
  return slot;
}

/** Needs for a static agent's expected tags that no configured need mentions (no mode constraint). */
function needsFor(tags: readonly string[], needs: readonly Need[]): Need[] {
  return tags.filter((t) => !needs.some((n) => n.tag === t)).map((tag) => ({ tag }));
}

function describeFromVocabulary(tags: readonly string[], vocabulary: TagVocabulary): string {
  return tags.map((t) => vocabulary.get(t)?.description ?? `Handles ${t} requests.`).join(' ');
}

function tenantRefuses(tenant: TenantPolicy | undefined, entry: CacheEntry, baseUrl: string): string | undefined {
  if (!tenant) return undefined;
  if (tenant.providers) {
    const org = entry.card.provider?.organization.toLowerCase();
    if (org === undefined || !tenant.providers.some((p) => p.toLowerCase() === org)) {
      return `provider ${org === undefined ? '(none)' : JSON.stringify(entry.card.provider!.organization)} is not one the tenant may use`;
    }
  }
  if (tenant.hosts) {
    const host = new URL(baseUrl).hostname;
    const ok = tenant.hosts.some((pattern) => {
      const h = pattern.toLowerCase();
      return h.startsWith('*.') ? host.endsWith(h.slice(1)) && host.length > h.length - 1 : host === h;
    });
    if (!ok) return `host ${host} is not one the tenant may use`;
  }
  return undefined;
}

/** The sentence when the card requires what the credentials cannot present (card security schemes honoured). */
function securityRefuses(presentable: SelectOptions['presentable'], entry: CacheEntry, called: CacheEntry['card'] | undefined, baseUrl: string): string | undefined {
  // A card without security requirements has no security origin: its model is not needed.
  if (presentable === undefined || !cardFacts(entry).secured) return undefined;
  // `called`: the card with a rewritten interface, when one was; else the card as it is.
  const card = called ?? entry.card;
  const origin = securityOrigin(card, baseUrl);
  if (origin === undefined) return undefined;
  const result = checkSecurityRequirements(card, presentable(origin), origin);
  return result.status === 'unsatisfiable' ? result.message : undefined;
}

/** Configured order first (a discovered agent's is infinite): 0 for two discovered agents, where `Infinity - Infinity` would be NaN. */
function byOrder(a: { order: number }, b: { order: number }): number {
  return a.order === b.order ? 0 : a.order < b.order ? -1 : 1;
}

/** Names an alert lists: the first {@link LISTED_NAMES}, then how many more (thousands of agents past a cap make one line, not a page). */
function listed(names: readonly string[]): string {
  return names.length <= LISTED_NAMES ? names.join(', ') : `${names.slice(0, LISTED_NAMES).join(', ')} and ${names.length - LISTED_NAMES} more`;
}

const LISTED_NAMES = 20;
