/**
 * Benchmark 4, run in its own process with `--expose-gc`: CPU cost of the pure pipeline stages
 * (no I/O). Snapshot build and digest for several sizes, a diff of two 10k snapshots, agent
 * selection over 10k candidates, endpoint resolution of 10k records.
 *
 * Cards are real: a few 0.3 cards parsed by `parseAgentCard`, shared by many agents (as many
 * endpoints of one deployment would). Names are pseudo-random, so sorting does real work.
 * Every snapshot sample processes `agentsPerSample` distinct agents: a small size is called on
 * `agentsPerSample / n` different lists, so no size gets a cache-hot advantage (a real cycle
 * builds its snapshot once) and the GC pressure per sample is the same. GC runs before each
 * sample; the sizes take turns within each repetition, in a rotated order. The growth check
 * also counts work (reads of `localName` by the sort and the digest), which no machine effect
 * can bend, and times a baseline: `Array.prototype.sort()` of the same names as plain strings.
 */
import { createHash } from 'node:crypto';
import type { CacheEntry } from '../../packages/core/src/cache/index.js';
import { parseAgentCard, type AgentCardModel, type CardProtocolVersion } from '../../packages/core/src/card/index.js';
import { seededRandom } from '../../packages/core/src/clock/index.js';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { selectAgents, TagVocabulary, type Candidate, type Need, type SelectOptions } from '../../packages/core/src/match/index.js';
import { resolveEndpoints, type AdmittedEndpoint } from '../../packages/core/src/resolve/index.js';
import { buildSnapshot, diffSnapshots, snapshotDigest, toSnapshotAgents, type Snapshot, type SnapshotAgent } from '../../packages/core/src/snapshot/index.js';
import type { EndpointRecord } from '../../packages/core/src/sources/index.js';
import { cardFor } from '../../test/helpers/cards.js';
import { benchCard } from './card.js';

export interface PipelineChildInput {
  sizes: number[];
  reps: number;
  warmupReps: number;
  /** Agents processed per timed sample (small sizes repeat the call). */
  agentsPerSample: number;
  /** Size of the two snapshots diffed, and of the selection and resolution inputs. */
  n10k: number;
  /** Share of agents that differ between the two diffed snapshots. */
  diffShare: number;
  limitMs: number;
}

export interface SelectCase {
  /** ms per call, one value per repetition. */
  ms: number[];
  candidates: number;
  selected: number;
  excluded: number;
  unsuitable: number;
  alerts: number;
}

export interface PipelineChildOutput {
  type: 'pipeline';
  repsDone: number;
  timedOut: boolean;
  /** Calls per sample (each on a different list), by size. */
  iterations: Record<string, number>;
  /** ms per call, one value per repetition, by size. */
  build: Record<string, number[]>;
  digest: Record<string, number[]>;
  /** snapshotDigest over input already sorted by name (what buildSnapshot's inner call sees). */
  digestSorted: Record<string, number[]>;
  /** Baseline: `names.slice().sort()`, the same names as plain strings, default comparison. */
  plainSort: Record<string, number[]>;
  /** Reads of `localName` (counted by a getter, untimed run), by size. */
  reads: { build: Record<string, number>; digest: Record<string, number> };
  diff: { ms: number[]; agents: number; added: number; removed: number; changed: number };
  select: Record<string, SelectCase>;
  resolve: { ms: number[]; records: number; admitted: number };
  /** toSnapshotAgents + buildSnapshot of the 10k selection (the rest of an evaluation). */
  snapshotOfSelection: { ms: number[]; agents: number };
  /** buildSnapshot's digest equals snapshotDigest of the unsorted input, at every size. */
  digestsAgree: boolean;
}

const input = JSON.parse(process.argv[2] ?? '{}') as PipelineChildInput;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const random = seededRandom(20261130);

interface ParsedCard {
  card: AgentCardModel;
  canonicalSha256: string;
  rawSha256: string;
  protocolVersion: CardProtocolVersion;
  body: string;
  warnings: CacheEntry['warnings'];
}

function parse(raw: Record<string, unknown>): ParsedCard {
  const body = JSON.stringify(raw);
  const p = parseAgentCard(body);
  if (!p.ok || !p.card || !p.canonicalSha256 || !p.protocolVersion) throw new Error(`bench card does not parse: ${JSON.stringify(p.problems)}`);
  return { card: p.card, canonicalSha256: p.canonicalSha256, rawSha256: p.rawSha256, protocolVersion: p.protocolVersion, body, warnings: p.warnings };
}

const ORIGIN = 'https://agents.bench.example';
/** Three cards that serve `billing` (4 skills, ~1.3 KB), one that does not (it ships things). */
const CARDS: ParsedCard[] = [
  parse(benchCard(ORIGIN, 'a')),
  parse(benchCard(ORIGIN, 'b')),
  parse(benchCard(ORIGIN, 'c')),
  parse(cardFor({ origin: ORIGIN }, 'd', { skills: [{ id: 'ship', name: 'ship', description: 'Ships orders.', tags: ['shipping'] }] })),
];
/** A changed version of card a: one more skill, another version string. */
const CHANGED = parse({ ...benchCard(ORIGIN, 'a'), version: '1.1.0', skills: [...(benchCard(ORIGIN, 'a')['skills'] as unknown[]), { id: 'a-skill-5', name: 'a skill 5', description: 'New.', tags: ['billing'] }] });

/** Unique pseudo-random local names (`^[a-z][a-z0-9_]{1,47}$`). */
function names(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`agent_${Math.floor(random() * 36 ** 8).toString(36)}_${i.toString(36)}`);
  return out;
}

const hex = (s: string) => createHash('sha256').update(s).digest('hex');

function agent(name: string, i: number, c: ParsedCard, canonical = hex(`${name}:${c.canonicalSha256}`)): SnapshotAgent {
  return Object.freeze({
    localName: name,
    description: 'Answers billing questions.',
    tags: Object.freeze(['billing']),
    critical: false,
    baseUrl: `https://agent-${i}.bench.example/`,
    sources: Object.freeze(['catalog']),
    card: c.card,
    // Distinct agents have distinct cards: a per-agent hash, as a real deployment would have.
    canonicalSha256: canonical,
    rawSha256: c.rawSha256,
    protocolVersion: c.protocolVersion,
    degraded: false,
    stale: false,
  });
}

function entryFor(baseUrl: string, c: ParsedCard): CacheEntry {
  return Object.freeze({
    baseUrl,
    cardUrl: `${baseUrl}.well-known/agent-card.json`,
    card: c.card,
    protocolVersion: c.protocolVersion,
    body: c.body,
    rawSha256: c.rawSha256,
    canonicalSha256: c.canonicalSha256,
    etag: '"bench"',
    lastModified: undefined,
    cacheHeaders: Object.freeze({ 'cache-control': 'public, max-age=300', etag: '"bench"' }),
    expiresAt: 300_000,
    failures: 0,
    stale: false,
    usable: true,
    nextAttemptAt: undefined,
    lastOutcome: 'revalidated',
    lastError: undefined,
    noStore: false,
    mustRevalidate: false,
    staleIfErrorMs: 0,
    fetchedAtWall: 1_796_000_000_000,
    validatedAtWall: 1_796_000_000_000,
    warnings: c.warnings,
    signature: undefined,
  });
}

const byName = (a: { localName: string }, b: { localName: string }) => (a.localName < b.localName ? -1 : a.localName > b.localName ? 1 : 0);

// ---- inputs (untimed) ---------------------------------------------------------------------

const iterations: Record<string, number> = {};
/** `iterations[n]` different lists of n agents each, and the same lists sorted, and their names. */
const lists = new Map<number, { agents: SnapshotAgent[][]; sorted: SnapshotAgent[][]; names: string[][] }>();
for (const n of input.sizes) {
  const it = Math.max(1, Math.round(input.agentsPerSample / n));
  iterations[n] = it;
  const agents = Array.from({ length: it }, () => names(n).map((name, i) => agent(name, i, CARDS[i % 3]!)));
  lists.set(n, { agents, sorted: agents.map((l) => [...l].sort(byName)), names: agents.map((l) => l.map((a) => a.localName)) });
}

/** Reads of `localName` while `fn` runs over n agents whose `localName` is a counting getter. */
function countReads(n: number, fn: (agents: SnapshotAgent[]) => unknown): number {
  let reads = 0;
  const list = names(n).map((name, i) => {
    const a = agent(name, i, CARDS[0]!);
    const counted = { ...a };
    Object.defineProperty(counted, 'localName', {
      get: () => {
        reads++;
        return name;
      },
      enumerable: true,
    });
    return Object.freeze(counted) as SnapshotAgent;
  });
  fn(list);
  return reads;
}

// Two snapshots of n10k agents differing in diffShare of them: half changed cards, a quarter
// removed, a quarter added.
const N = input.n10k;
const baseAgents = names(N).map((name, i) => agent(name, i, CARDS[i % 3]!));
const differing = Math.round(N * input.diffShare);
const nChanged = Math.round(differing / 2);
const nRemoved = Math.round(differing / 4);
const nAdded = differing - nChanged - nRemoved;
const nextAgents = baseAgents.slice(nRemoved).map((a, i) => (i < nChanged ? agent(a.localName, i, CHANGED) : a));
for (const [k, name] of names(nAdded).entries()) nextAgents.push(agent(`new_${name}`, N + k, CARDS[0]!));
const snapA: Snapshot = buildSnapshot(baseAgents, 1, 0);
const snapB: Snapshot = buildSnapshot(nextAgents, 2, 0);

// Selection: N discovered candidates (sorted by base URL, as the resolver hands them over), a
// quarter of them with a card that meets no need.
const vocabulary = new TagVocabulary(
  ['billing', 'finance', 'shipping', 's1', 's2', 's3', 's4'].map((tag) => ({ tag, description: `Handles ${tag} requests.` })),
);
const needs: Need[] = [{ tag: 'billing', inputModes: ['text/plain'], outputModes: ['text/plain'] }, { tag: 'finance' }];
const records: EndpointRecord[] = names(N).map((name, i) =>
  Object.freeze({ name: `catalog/${name.replace(/_/g, '-')}`, baseUrl: `https://agent-${i}.bench.example/v1`, source: 'catalog', metadata: Object.freeze({}) }),
);
const policy = HostPolicy.from({ allow: ['https://*.bench.example'] });
const admitted: readonly AdmittedEndpoint[] = resolveEndpoints([records], policy).admitted;
const candidates: Candidate[] = admitted.map((endpoint, i) => ({ endpoint, entry: entryFor(endpoint.baseUrl, CARDS[i % 4]!) }));
const ALL = `cap ${N} (every eligible agent kept)`;
const selectCases: Record<string, SelectOptions> = {
  'cap 16 (default)': { needs, vocabulary },
  [ALL]: { needs, vocabulary, maxAgents: N },
  'cap 16 + tenant policy (providers, hosts)': { needs, vocabulary, tenant: { providers: ['Bench Org'], hosts: ['*.bench.example'] } },
};
const selectAll = selectAgents(candidates, selectCases[ALL]!);

// ---- timing -------------------------------------------------------------------------------

let sink: unknown;
/** ms per call, over `lists` (one call each), after a GC. */
function sample<T>(inputs: readonly T[], fn: (x: T) => unknown): number {
  gc();
  const t0 = performance.now();
  for (const x of inputs) sink = fn(x);
  return (performance.now() - t0) / inputs.length;
}
const once = [undefined];

const out: PipelineChildOutput = {
  type: 'pipeline',
  repsDone: 0,
  timedOut: false,
  iterations,
  build: {},
  digest: {},
  digestSorted: {},
  plainSort: {},
  reads: { build: {}, digest: {} },
  diff: { ms: [], agents: N, added: 0, removed: 0, changed: 0 },
  select: {},
  resolve: { ms: [], records: records.length, admitted: admitted.length },
  snapshotOfSelection: { ms: [], agents: selectAll.selected.length },
  digestsAgree: true,
};
for (const n of input.sizes) {
  out.build[n] = [];
  out.digest[n] = [];
  out.digestSorted[n] = [];
  out.plainSort[n] = [];
  out.reads.build[n] = countReads(n, (l) => buildSnapshot(l, 1, 0));
  out.reads.digest[n] = countReads(n, (l) => snapshotDigest(l));
  for (const l of lists.get(n)!.agents) if (buildSnapshot(l, 1, 0).digest !== snapshotDigest(l)) out.digestsAgree = false;
}
for (const [name, opts] of Object.entries(selectCases)) {
  const s = selectAgents(candidates, opts);
  const vs = [...s.verdicts.values()];
  out.select[name] = {
    ms: [],
    candidates: candidates.length,
    selected: s.selected.length,
    excluded: vs.filter((v) => v.verdict === 'excluded').length,
    unsuitable: vs.filter((v) => v.verdict === 'unsuitable').length,
    alerts: s.alerts.length,
  };
}
const d = diffSnapshots(snapA, snapB);
out.diff = { ms: [], agents: N, added: d.added.length, removed: d.removed.length, changed: d.changed.length };

const deadline = performance.now() + input.limitMs;
for (let r = 0; r < input.warmupReps + input.reps; r++) {
  if (performance.now() > deadline) {
    out.timedOut = true;
    break;
  }
  const timed = r >= input.warmupReps;
  const sizes = input.sizes.map((_, i) => input.sizes[(i + r) % input.sizes.length]!);
  for (const n of sizes) {
    const l = lists.get(n)!;
    const b = sample(l.agents, (a) => buildSnapshot(a, 1, 0));
    const g = sample(l.agents, (a) => snapshotDigest(a));
    const gs = sample(l.sorted, (a) => snapshotDigest(a));
    const ps = sample(l.names, (a) => a.slice().sort());
    if (timed) {
      out.build[n]!.push(b);
      out.digest[n]!.push(g);
      out.digestSorted[n]!.push(gs);
      out.plainSort[n]!.push(ps);
    }
  }
  const df = sample(once, () => diffSnapshots(snapA, snapB));
  const rs = sample(once, () => resolveEndpoints([records], policy));
  const sel: Record<string, number> = {};
  for (const [name, opts] of Object.entries(selectCases)) sel[name] = sample(once, () => selectAgents(candidates, opts));
  const ss = sample(once, () => buildSnapshot(toSnapshotAgents(selectAll.selected), 1, 0));
  if (timed) {
    out.diff.ms.push(df);
    out.resolve.ms.push(rs);
    for (const [name, ms] of Object.entries(sel)) out.select[name]!.ms.push(ms);
    out.snapshotOfSelection.ms.push(ss);
    out.repsDone++;
  }
}
void sink;
process.send?.(out);
