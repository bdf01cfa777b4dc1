/**
 * Snapshots: immutable, versioned lists of selected agents, identified by a digest over the
 * sorted (local name, canonical card hash) pairs. A snapshot is one frozen object behind one
 * reference, so readers always see a coherent {version, digest, agents}.
 */
import { createHash } from 'node:crypto';
import { withEntryCard } from '../cache/cache-entries.js';
import { cardKindOf } from '../cache/index.js';
import type { AgentCardModel, CardProtocolVersion } from '../card/index.js';
import { canonicalJson } from '../card/index.js';
import type { SelectedAgent } from '../match/index.js';
import type { TransportOptions } from '../sources/transport-options.js';
import { transportKey } from '../sources/transport-options.js';
import type { ChangeImpact } from './change-impact.js';
import { classifyAgentChange } from './change-impact.js';
import { runPaced, runSteps, type Pacer } from '../clock/pacer.js';
import { sortByLocalName, sortByLocalNameSteps } from '../local-name.js';

export interface SnapshotAgent {
  readonly localName: string;
  /** Reviewed description (ours, never the card's). */
  readonly description: string;
  /** Reviewed tags the agent serves. */
  readonly tags: readonly string[];
  /**
   * Present when its static entry routes it by `routingTags` (then `tags` come from the entry,
   * whatever its card says): the card's own skill tags, distinct and sorted, shown but not used.
   * When present, `tags` are part of the digest (a change of the routing tags rebuilds trees).
   */
  readonly cardTags?: readonly string[];
  /**
   * Present when its static entry's `interfaceUrl` replaced the card's chosen interface, whose
   * host was unroutable (`0.0.0.0`, `::`). Not part of the digest (the `interfaceUrl` in `transport` is).
   */
  readonly interfaceRewritten?: { readonly from: string; readonly to: string };
  readonly critical: boolean;
  /** With routing domains: the domain (sub-router) holding it. Part of the digest. */
  readonly domain?: string;
  readonly baseUrl: string;
  /** Ids of the sources that proposed it (provenance). */
  readonly sources: readonly string[];
  /**
   * The `urn:air:` identifier an AI Catalog gave it, kept so our own catalog preserves it (on
   * every replica, after a restart). Not part of the digest.
   */
  readonly identifier?: string;
  /** Where its card was read (the well-known path that answered, or the card URL given). Not part of the digest. */
  readonly cardUrl?: string;
  readonly card: AgentCardModel;
  /**
   * Which card `card` is: the agent's public card, or the authenticated extended card it serves
   * to `identity` (docs/authentication.md). Not part of the digest (the card's hash is, so the
   * digest changes when the extended card does). Absent in snapshots built by hand: public.
   */
  readonly cardKind?: 'public' | 'extended';
  /** For an extended card: the label of the identity it was fetched with (never a secret). */
  readonly identity?: string;
  /**
   * The card's bytes as received (UTF-8 JSON text), kept so a durable store can hold the
   * snapshot's cards by content. Absent in snapshots built by hand. An agent made from the card
   * cache's entry shares its packed text and unpacks it on each read (see `CacheEntry.body`).
   */
  readonly body?: string;
  readonly canonicalSha256: string;
  readonly rawSha256: string;
  readonly protocolVersion: CardProtocolVersion;
  /**
   * How its remote agent calls it (`streaming: false`, extra headers, a timeout, a tenant), from
   * the static entry or registry record that proposed it. Part of the digest when present.
   */
  readonly transport?: TransportOptions;
  /** Flags at publication time; not part of the digest. */
  readonly degraded: boolean;
  readonly stale: boolean;
}

/** One routing domain of a two-level snapshot: a sub-router over its agents. */
export interface SnapshotDomain {
  /** The sub-router's agent name. */
  readonly name: string;
  /** Reviewed text (ours). */
  readonly description: string;
  /** Local names of its agents, sorted. */
  readonly agents: readonly string[];
}

export interface Snapshot {
  /** Increments by one each time a new digest is published. */
  readonly version: number;
  /** Lower-case hex SHA-256; see {@link snapshotDigest}. */
  readonly digest: string;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  /** Sorted by local name (code-unit order). */
  readonly agents: readonly SnapshotAgent[];
  /**
   * With routing domains: the layout, in configuration order, domains with at least one agent
   * only. Absent for a one-level tree.
   */
  readonly domains?: readonly SnapshotDomain[];
}

/**
 * The digest: SHA-256 over `localName \0 canonicalSha256 \n` for each agent, sorted by local
 * name in code-unit order (never `localeCompare`). Two snapshots have the same digest exactly
 * when they hold the same names bound to the same cards. A two-level snapshot (routing domains)
 * adds its layout: `\0 domain` on each agent's line, then one `domain \0 name \n` line per
 * domain in order; a one-level snapshot's digest is unchanged by this. An agent with transport
 * options adds `\0 transport <canonical options>` to its line (so a change of them rebuilds trees);
 * an agent without them hashes as before. An agent routed by its entry's `routingTags` (it has
 * `cardTags`) adds `\0 routing <tags, comma-joined>` after that, since its tags are not its card's.
 */
export function snapshotDigest(agents: ReadonlyArray<DigestedAgent>, domains?: readonly Pick<SnapshotDomain, 'name'>[]): string {
  return digestOfSorted(sortByLocalName(agents), domains);
}

/** What the digest reads of an agent. */
type DigestedAgent = Pick<SnapshotAgent, 'localName' | 'canonicalSha256' | 'domain' | 'transport'> & Partial<Pick<SnapshotAgent, 'tags' | 'cardTags'>>;

function digestOfSorted(sorted: ReadonlyArray<DigestedAgent>, domains?: readonly Pick<SnapshotDomain, 'name'>[]): string {
  return runSteps(digestSteps(sorted, domains));
}

/** The digest, yielding after each 512 lines hashed. */
function* digestSteps(sorted: ReadonlyArray<DigestedAgent>, domains?: readonly Pick<SnapshotDomain, 'name'>[]): Generator<void, string> {
  const h = createHash('sha256');
  // The same bytes as one update per line, hashed 512 lines at a time (a native call per line
  // cost more than the hashing).
  let chunk = '';
  let lines = 0;
  for (const a of sorted) {
    const transport = a.transport === undefined ? '' : `\u0000transport ${transportKey(a.transport)}`;
    const routing = a.cardTags === undefined ? '' : `\u0000routing ${(a.tags ?? []).join(',')}`;
    chunk += a.domain === undefined ? `${a.localName}\u0000${a.canonicalSha256}${transport}${routing}\n` : `${a.localName}\u0000${a.canonicalSha256}\u0000${a.domain}${transport}${routing}\n`;
    if (++lines === 512) {
      h.update(chunk);
      chunk = '';
      lines = 0;
      yield;
    }
  }
  for (const d of domains ?? []) chunk += `domain\u0000${d.name}\n`;
  if (chunk !== '') h.update(chunk);
  return h.digest('hex');
}

/** Turns a selection into snapshot agents. */
export function toSnapshotAgents(
  selected: readonly SelectedAgent[],
  flags: (baseUrl: string) => { degraded: boolean; transport?: TransportOptions } = () => ({ degraded: false }),
): SnapshotAgent[] {
  return selected.map((s) => {
    const f = flags(s.baseUrl);
    // The agent reads the cache's packed text and weakly held model (its slot): a published agent
    // keeps neither a model (100,000 agents held 230 MB of them) nor a copy of the text (issue 43).
    const agent = {
      localName: s.localName,
      description: s.description,
      tags: s.tags,
      ...(s.cardTags !== undefined && { cardTags: s.cardTags }),
      ...(s.interfaceRewritten !== undefined && { interfaceRewritten: s.interfaceRewritten }),
      critical: s.critical,
      ...(s.domain !== undefined && { domain: s.domain }),
      baseUrl: s.baseUrl,
      sources: s.sources,
      ...(s.identifier !== undefined && { identifier: s.identifier }),
      cardUrl: s.entry.cardUrl,
      ...cardKindOf(s.entry),
      canonicalSha256: s.entry.canonicalSha256,
      rawSha256: s.entry.rawSha256,
      protocolVersion: s.entry.protocolVersion,
      ...(f.transport !== undefined && { transport: f.transport }),
      degraded: f.degraded,
      stale: s.entry.stale,
    };
    return Object.freeze(withEntryCard(agent, s.entry));
  });
}

/**
 * Builds a frozen snapshot (agents sorted, digest computed). With `domains` (the routing domains
 * in configuration order) the snapshot has two levels: its layout lists each domain that holds at
 * least one agent (by the agents' `domain`).
 */
export function buildSnapshot(
  agents: readonly SnapshotAgent[],
  version: number,
  createdAt: number,
  domains?: ReadonlyArray<Pick<SnapshotDomain, 'name' | 'description'>>,
): Snapshot {
  return runSteps(buildSteps(agents, version, createdAt, domains));
}

/** {@link buildSnapshot} in slices: the same snapshot, its digest written between `pacer` ticks (100,000 agents on a first publication). */
export function buildSnapshotPaced(
  agents: readonly SnapshotAgent[],
  version: number,
  createdAt: number,
  domains: ReadonlyArray<Pick<SnapshotDomain, 'name' | 'description'>> | undefined,
  pacer: Pacer,
): Promise<Snapshot> {
  return runPaced(buildSteps(agents, version, createdAt, domains), pacer);
}

function* buildSteps(
  agents: readonly SnapshotAgent[],
  version: number,
  createdAt: number,
  domains?: ReadonlyArray<Pick<SnapshotDomain, 'name' | 'description'>>,
): Generator<void, Snapshot> {
  const sorted = yield* sortByLocalNameSteps(agents);
  yield;
  if (domains === undefined || domains.length === 0) {
    return Object.freeze({ version, digest: yield* digestSteps(sorted), createdAt, agents: Object.freeze(sorted) });
  }
  const layout = domains
    .map((d) => Object.freeze({ name: d.name, description: d.description, agents: Object.freeze(sorted.filter((a) => a.domain === d.name).map((a) => a.localName)) }))
    .filter((d) => d.agents.length > 0);
  yield;
  return Object.freeze({ version, digest: yield* digestSteps(sorted, layout), createdAt, agents: Object.freeze(sorted), domains: Object.freeze(layout) });
}

interface AgentChange extends ChangeImpact {
  readonly localName: string;
  readonly skillsAdded: readonly string[];
  readonly skillsRemoved: readonly string[];
  /** Skills whose tags or modes changed. */
  readonly skillsModified: readonly string[];
  readonly endpointChanged?: { readonly from: string[]; readonly to: string[] };
  readonly securityChanged: boolean;
  readonly versionChanged?: { readonly from: string; readonly to: string };
  /** Description or other card text changed (reported, never adopted). */
  readonly textChanged: boolean;
}

/** One agent's verdict in a {@link SnapshotDiff}: added, removed or changed. */
export interface AgentImpact extends ChangeImpact {
  /** The agent's local name. */
  readonly localName: string;
}

export interface SnapshotDiff {
  readonly from?: { version: number; digest: string };
  readonly to: { version: number; digest: string };
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** Agents whose card, reviewed tags or transport options changed, each with its verdict ({@link classifyAgentChange}). */
  readonly changed: readonly AgentChange[];
  /** Local names of the agents whose change is breaking (removed agents included), sorted. */
  readonly breaking: readonly string[];
  /** The verdict on every added, removed and changed agent, sorted by local name. */
  readonly impacts: readonly AgentImpact[];
}

/**
 * What changed between two snapshots, agent by agent, each change classified as breaking or
 * compatible with its reasons ({@link classifyAgentChange}). An agent is changed when its card
 * hash, reviewed tags or transport options differ.
 */
export function diffSnapshots(from: Snapshot | undefined, to: Snapshot): SnapshotDiff {
  return runSteps(diffSteps(from, to));
}

/** {@link diffSnapshots} in slices: the same diff, the agents compared between `pacer` ticks (100,000 added by a first publication). */
export function diffSnapshotsPaced(from: Snapshot | undefined, to: Snapshot, pacer: Pacer): Promise<SnapshotDiff> {
  return runPaced(diffSteps(from, to), pacer);
}

/** Agents compared between two yields of {@link diffSteps}. */
const AGENTS_PER_STEP = 256;

/** The diff, yielding every {@link AGENTS_PER_STEP} agents (where a paced caller lets the event loop run). */
function* diffSteps(from: Snapshot | undefined, to: Snapshot): Generator<void, SnapshotDiff> {
  let compared = 0;
  const before = new Map<string, SnapshotAgent>();
  const after = new Map<string, SnapshotAgent>();
  for (const a of from?.agents ?? []) {
    if (++compared % AGENTS_PER_STEP === 0) yield;
    before.set(a.localName, a);
  }
  for (const a of to.agents) {
    if (++compared % AGENTS_PER_STEP === 0) yield;
    after.set(a.localName, a);
  }
  yield;
  const added = [...after.keys()].filter((n) => !before.has(n));
  yield;
  const removed = [...before.keys()].filter((n) => !after.has(n));
  const impacts: AgentImpact[] = [];
  for (const n of added) {
    if (++compared % AGENTS_PER_STEP === 0) yield;
    impacts.push({ localName: n, ...classifyAgentChange(undefined, after.get(n)) });
  }
  for (const n of removed) {
    if (++compared % AGENTS_PER_STEP === 0) yield;
    impacts.push({ localName: n, ...classifyAgentChange(before.get(n), undefined) });
  }
  const changed: AgentChange[] = [];
  for (const [name, b] of after) {
    if (++compared % AGENTS_PER_STEP === 0) yield;
    const a = before.get(name);
    if (!a || !differs(a, b)) continue;
    const impact = classifyAgentChange(a, b);
    changed.push(diffAgent(a, b, impact));
    impacts.push({ localName: name, ...impact });
  }
  yield;
  const sorted = yield* sortByLocalNameSteps(impacts);
  return {
    ...(from && { from: { version: from.version, digest: from.digest } }),
    to: { version: to.version, digest: to.digest },
    added,
    removed,
    changed,
    breaking: sorted.filter((i) => i.impact === 'breaking').map((i) => i.localName),
    impacts: sorted,
  };
}

/** Whether an agent changed in a way {@link classifyAgentChange} judges (flags such as degraded do not count). */
function differs(a: SnapshotAgent, b: SnapshotAgent): boolean {
  if (a.canonicalSha256 !== b.canonicalSha256) return true;
  const tags = (x: SnapshotAgent) => [...x.tags].sort().join('\u0000');
  if (tags(a) !== tags(b)) return true;
  return (a.transport === undefined ? '' : transportKey(a.transport)) !== (b.transport === undefined ? '' : transportKey(b.transport));
}

function diffAgent(a: SnapshotAgent, b: SnapshotAgent, impact: ChangeImpact): AgentChange {
  const skillKey = (s: AgentCardModel['skills'][number]) => JSON.stringify([s.tags, s.inputModes ?? [], s.outputModes ?? []]);
  const sa = new Map(a.card.skills.map((s) => [s.id, skillKey(s)]));
  const sb = new Map(b.card.skills.map((s) => [s.id, skillKey(s)]));
  const endpoints = (c: AgentCardModel) => c.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.url}`);
  const ea = endpoints(a.card);
  const eb = endpoints(b.card);
  const textOf = (c: AgentCardModel) => JSON.stringify([c.name, c.description, c.skills.map((s) => [s.name, s.description, s.examples ?? []])]);
  return {
    localName: b.localName,
    skillsAdded: [...sb.keys()].filter((id) => !sa.has(id)),
    skillsRemoved: [...sa.keys()].filter((id) => !sb.has(id)),
    skillsModified: [...sb.keys()].filter((id) => sa.has(id) && sa.get(id) !== sb.get(id)),
    ...(JSON.stringify(ea) !== JSON.stringify(eb) && { endpointChanged: { from: ea, to: eb } }),
    securityChanged:
      canonicalJson([a.card.securitySchemes ?? {}, a.card.securityRequirements ?? []]) !==
      canonicalJson([b.card.securitySchemes ?? {}, b.card.securityRequirements ?? []]),
    ...(a.card.version !== b.card.version && { versionChanged: { from: a.card.version, to: b.card.version } }),
    textChanged: textOf(a.card) !== textOf(b.card),
    impact: impact.impact,
    reasons: impact.reasons,
  };
}
