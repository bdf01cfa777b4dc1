/**
 * Seeded chaos (issue #13, "Done means"): 200 loopback endpoints on four fault servers (four
 * origins) whose behaviour changes at random — healthy, slow, hanging, failing, malformed,
 * changed, removed from the registry, re-added — for a few thousand refresh cycles on a
 * virtual clock, while readers pin sessions with `rootFor`, run turns on the pinned trees, end
 * sessions or leave them to idle out. After every cycle (and, for the snapshot, on every tick
 * while a cycle runs) the invariants below are checked; each failure message starts with
 * `CHAOS_SEED=<n>` so the run can be replayed:
 *
 *   CHAOS_SEED=<n> node --import tsx --test test/loop/chaos.test.ts
 *
 * (`CHAOS_CYCLES` changes the number of cycles, default 2,000.) The scenario (every chaos
 * decision, every step of the clock, every reader action) comes from the seed; only the order
 * in which concurrent loopback responses arrive is left to the machine.
 *
 * Invariants:
 * 1. Readers never see a half-built snapshot and never throw: `loop.current()` is frozen, its
 *    agents frozen, sorted, unique, and its digest is `snapshotDigest(agents)`; versions only grow.
 * 2. Every pinned session gets the very same root object until it ends or idles out; an idled-out
 *    session that comes back starts anew (`restartedFrom` names its old digest); a turn runs on
 *    the pinned tree (the scripted reply names the pinned digest).
 * 3. Invalid content never enters a snapshot (or the cache): every card's `rawSha256` is the hash
 *    of a valid body that very endpoint served; no malformed body ever appears.
 * 4. An agent with a usable card is never dropped for backoff alone: health leaves only after
 *    `leaveAfter` failed fetches with an unusable card (a removed endpoint has a usable card again
 *    only after it answered; it stays out until `enterAfter` good observations in a row), critical
 *    agents never leave, health and cache count the same failures, and a selected member is in
 *    the published snapshot.
 * 5. Alerts with a key pair with their resolutions (no second raise before the resolve, no
 *    resolve without a raise), and the unresolved ones are exactly `loop.activeAlerts`.
 * 6. In-flight requests never exceed `maxConcurrentFetches` overall and `maxFetchesPerOrigin`
 *    per origin (counted at the fetcher, and by the cache's own limiter).
 * 7. An endpoint no source proposes is never requested again (fault-server hit counters).
 * 8. Retained snapshots, built roots, pins and ADK sessions stay bounded by the live sessions.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { BaseAgent } from '@google/adk';
import { InMemorySessionService, LlmAgent } from '@google/adk';
import { buildRootAgent, SessionRunner, TreeFactory } from '../../packages/core/src/adk/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { seededRandom, VirtualClock } from '../../packages/core/src/clock/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import type { EndpointStatus } from '../../packages/core/src/loop/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import type { Snapshot } from '../../packages/core/src/snapshot/index.js';
import { snapshotDigest } from '../../packages/core/src/snapshot/index.js';
import type { StaticAgentConfig } from '../../packages/core/src/sources/index.js';
import { staticSource } from '../../packages/core/src/sources/index.js';
import { ScriptedLlm } from '../helpers/a2a-peers.js';
import { cardFor } from '../helpers/cards.js';
import type { FaultEndpoint, FaultServer } from '../helpers/fault-server.js';
import { startFaultServer } from '../helpers/fault-server.js';
import { listSource } from '../helpers/list-source.js';

const SEED = process.env.CHAOS_SEED !== undefined && process.env.CHAOS_SEED !== '' ? Number(process.env.CHAOS_SEED) >>> 0 : (Math.random() * 2 ** 32) >>> 0;
const CYCLES = Math.max(1, Number(process.env.CHAOS_CYCLES ?? 2_000));
const ORIGINS = 4;
const PER_ORIGIN = 50; // 200 endpoints
const MAX_CONCURRENT = 5;
const MAX_PER_ORIGIN = 2;
const LEAVE_AFTER = 3;
const ENTER_AFTER = 2;
const IDLE_MS = 45_000;
const READERS = 16;
const HEAL_MIN_CYCLES = 30;
const HEAL_MAX_CYCLES = 120;
const HANG_TIMEOUT_MS = 300; // real time: the fetcher's total deadline, the cost of one hang


const sha = (body: string | Buffer) => createHash('sha256').update(body).digest('hex');

let cycle = -1;
const tag = () => `CHAOS_SEED=${SEED} cycle=${cycle}`;
function check(cond: unknown, message: string): asserts cond {
  if (!cond) assert.fail(`${tag()}: ${message}`);
}

/** A fetcher that counts requests in flight, overall and per origin (the caps, seen from outside the cache). */
function countingFetcher(inner: CardFetcher) {
  const byOrigin = new Map<string, number>();
  const stats = { running: 0, peak: 0, peakPerOrigin: 0, requests: 0 };
  const fetcher: CardFetcher = {
    async fetch(url, init) {
      const origin = new URL(url).origin;
      const n = (byOrigin.get(origin) ?? 0) + 1;
      byOrigin.set(origin, n);
      stats.running++;
      stats.requests++;
      stats.peak = Math.max(stats.peak, stats.running);
      stats.peakPerOrigin = Math.max(stats.peakPerOrigin, n);
      try {
        return await inner.fetch(url, init);
      } finally {
        stats.running--;
        byOrigin.set(origin, byOrigin.get(origin)! - 1);
      }
    },
    close: () => inner.close(),
  };
  return { fetcher, stats };
}

const servers: FaultServer[] = [];
before(async () => {
  for (let i = 0; i < ORIGINS; i++) servers.push(await startFaultServer({ maxRecordedRequests: 0 }));
});
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

interface Peer {
  readonly index: number;
  readonly ep: FaultEndpoint;
  readonly fs: FaultServer;
  /** Local name (static config name, or the registry record name). */
  readonly name: string;
  readonly static?: StaticAgentConfig;
  version: number;
  tag: string;
  inRegistry: boolean;
  hangUntil?: number;
}

const VOCAB = ['support', 'billing'];
const CARD_TAGS = ['support', 'support', 'billing', 'billing', 'shipping', 'other'];
// Lifetimes long enough that a cycle refreshes ~5 % of the endpoints (the rest are cache hits).
const CACHE_CONTROLS: Array<string | null> = ['max-age=30', 'max-age=60', 'max-age=90', 'max-age=120', 'max-age=45', null, 'no-cache', 'max-age=40, must-revalidate', 'max-age=30, stale-if-error=60', 'no-store'];

test(`chaos: 200 endpoints, ${CYCLES} refresh cycles, readers and turns on a virtual clock (CHAOS_SEED=${SEED})`, { timeout: 600_000 }, async () => {
  console.log(`# CHAOS_SEED=${SEED} CHAOS_CYCLES=${CYCLES}`);
  const wallStart = performance.now();
  const rng = seededRandom(SEED);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
  const chance = (p: number) => rng() < p;

  const clock = new VirtualClock();
  const policy = HostPolicy.from({ allow: servers.map((s) => s.origin), allowLoopback: true });
  const real = createCardFetcher({ policy, totalTimeoutMs: HANG_TIMEOUT_MS, maxConnectionsPerOrigin: MAX_PER_ORIGIN, maxBodyBytes: 16_384 });
  const { fetcher, stats: wire } = countingFetcher(real);

  // ---- endpoints: which bodies are valid (hash → endpoint), which were served invalid ----
  const validBodies = new Map<string, string>();
  const invalidBodies = new Set<string>();
  const peers: Peer[] = [];
  const byUrl = new Map<string, Peer>();
  const cardOf = (p: { ep: FaultEndpoint; fs: FaultServer }, version: number, t: string) =>
    cardFor(p.fs, p.ep.id, {
      version: `${version}.0.0`,
      skills: [{ id: `${p.ep.id}-s${version}`, name: `${p.ep.id} skill`, description: `Skill ${version}.`, tags: [t] }],
    });
  const setCard = (p: Peer) => {
    p.ep.setCard(cardOf(p, p.version, p.tag));
    validBodies.set(sha(p.ep.body), p.ep.baseUrl);
  };
  const statics: StaticAgentConfig[] = [];
  for (let o = 0; o < ORIGINS; o++) {
    for (let i = 0; i < PER_ORIGIN; i++) {
      const index = o * PER_ORIGIN + i;
      const fs = servers[o]!;
      const ep = fs.endpoint(`ep${String(index).padStart(3, '0')}`, { cacheControl: pick(CACHE_CONTROLS.slice(0, 6)) });
      // The first endpoint of each origin, and two more, are reviewed static agents; two of them critical.
      const isStatic = i === 0 || (o === 0 && (i === 1 || i === 2));
      const staticTag = index % 2 === 0 ? 'support' : 'billing';
      const cfg: StaticAgentConfig | undefined = isStatic
        ? { name: `static_${ep.id}`, url: ep.baseUrl, description: `Reviewed ${ep.id}.`, tags: [staticTag], critical: i === 0 && o < 2 }
        : undefined;
      if (cfg) statics.push(cfg);
      const p: Peer = { index, ep, fs, name: cfg?.name ?? ep.id, version: 1, tag: cfg ? staticTag : pick(CARD_TAGS), inRegistry: !cfg, ...(cfg && { static: cfg }) };
      setCard(p);
      peers.push(p);
      byUrl.set(ep.baseUrl, p);
    }
  }
  const critical = new Set(statics.filter((s) => s.critical).map((s) => s.url!));

  const registry = listSource('catalog');
  const publishRegistry = () => registry.set(peers.filter((p) => p.inRegistry).map((p) => ({ name: p.name, baseUrl: p.ep.baseUrl })));
  publishRegistry();

  // ---- the event stream: alert pairing, expiries, health transitions, counts ----
  const problems: string[] = [];
  const activeKeys = new Set<string>();
  const expiredSessions = new Set<string>();
  const counts = new Map<string, number>();
  /** Timeouts of endpoints that were not hanging: the real-time deadline passed under load. */
  const spuriousTimeouts: string[] = [];
  let sweptSinceWarmup = false;
  /**
   * Endpoints with a successful fetch since health last removed them: their card is usable again,
   * yet they stay out until `enterAfter` good observations in a row (a failed fetch in between
   * starts the count again). Health removes only with an unusable card, so a removed endpoint
   * with a usable card must be one of these.
   */
  const answeredSinceRemoval = new Set<string>();
  let racedWarmups = 0;
  const bump = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);
  const stream = new EventStream({ wallNow: () => clock.wallNow(), onListenerError: (err) => problems.push(`event listener threw: ${String(err)}`) });
  stream.subscribe((e: DiscoveryEvent) => {
    bump(e.type === 'card.result' ? `card.${e.outcome}` : e.type === 'alert' ? `alert:${e.kind}` : e.type);
    if (e.type === 'card.result' && (e.outcome === 'changed' || e.outcome === 'unchanged' || e.outcome === 'revalidated')) answeredSinceRemoval.add(e.endpoint);
    if (e.type === 'card.result' && e.code === 'ERR_FETCH_TIMEOUT' && byUrl.get(e.endpoint)?.ep.mode.mode !== 'hang') {
      spuriousTimeouts.push(`cycle ${cycle} ${e.endpoint}: ${e.reason}`);
    }
    if (e.type === 'alert' && e.kind === 'critical-unavailable') console.log(`# critical-unavailable at cycle ${cycle}: ${e.message}`);
    if (e.type === 'alert' && e.key !== undefined) {
      if (activeKeys.has(e.key)) problems.push(`alert ${e.key} raised twice without a resolution in between`);
      activeKeys.add(e.key);
    } else if (e.type === 'alert.resolved') {
      if (!activeKeys.delete(e.key)) problems.push(`alert.resolved ${e.key} without an active alert`);
    } else if (e.type === 'snapshot.published') {
      // The tree warmed up (built and checked) in beforePublish is the one sessions get: it must
      // still be built when its snapshot goes out, not rebuilt on a user's first request.
      // (A session released in the one microtask between warm-up and publication sweeps that root
      // too, and it is rebuilt on the next rootFor; that race is counted, not failed.)
      if (!trees.builtDigests.includes(e.digest)) {
        if (sweptSinceWarmup) racedWarmups++;
        else problems.push(`v${e.version} (${e.digest.slice(0, 12)}) was published but its warmed-up tree is no longer built`);
      }
    } else if (e.type === 'tree.built') {
      sweptSinceWarmup = false;
    } else if (e.type === 'session.ended' || e.type === 'session.upgraded' || e.type === 'session.restarted') {
      sweptSinceWarmup = true;
    } else if (e.type === 'session.expired') {
      sweptSinceWarmup = true;
      expiredSessions.add(e.sessionId);
    } else if (e.type === 'health.changed' && e.to === 'removed') {
      answeredSinceRemoval.delete(e.endpoint);
      if (e.failures < LEAVE_AFTER) problems.push(`${e.endpoint} left with ${e.failures} failures (< leaveAfter ${LEAVE_AFTER})`);
      if (critical.has(e.endpoint)) problems.push(`critical ${e.endpoint} was removed for health`);
    } else if (e.type === 'alert' && e.kind === 'publish-refused') {
      problems.push(`a publication was refused: ${e.message}`);
    } else if (e.type === 'alert' && e.kind === 'cycle-failed') {
      problems.push(`a cycle failed: ${e.message}`);
    }
  });

  // ---- the pipeline ----
  const cache = new CardCache({
    fetcher,
    hostPolicy: policy,
    clock,
    events: stream,
    random: seededRandom(SEED ^ 0x9e3779b9),
    minTtlMs: 4_000,
    defaultTtlMs: 60_000,
    maxTtlMs: 120_000,
    backoffBaseMs: 1_000,
    backoffMaxMs: 32_000,
    maxStaleMs: 20_000,
    maxConcurrentFetches: MAX_CONCURRENT,
    maxFetchesPerOrigin: MAX_PER_ORIGIN,
    check: { allowLoopback: true },
  });
  // eslint-disable-next-line prefer-const
  let trees: TreeFactory;
  const loop = new DiscoveryLoop({
    sources: [staticSource({ id: 'config', agents: statics }), registry],
    hostPolicy: policy,
    cache,
    clock,
    random: seededRandom(SEED + 1),
    events: stream,
    select: { needs: VOCAB.map((t) => ({ tag: t })), vocabulary: new TagVocabulary(VOCAB.map((t) => ({ tag: t, description: `${t} questions.` }))), maxAgents: 48 },
    health: { enterAfter: ENTER_AFTER, leaveAfter: LEAVE_AFTER },
    staticEnterAfter: 1,
    cycleIntervalMs: 1e12, // cycles are driven by the test
    resyncIntervalMs: 90_000,
    removalGraceMs: 40_000,
    beforePublish: (next) => void trees.prepare(next),
  });
  trees = new TreeFactory({
    snapshots: loop.snapshots,
    clock,
    events: stream,
    idleTimeoutMs: IDLE_MS,
    buildRoot: (s) =>
      buildRootAgent(
        'orchestrator',
        s,
        s.agents.map((a) => new LlmAgent({ name: a.localName, description: a.description, model: new ScriptedLlm(`${a.localName}@${s.digest.slice(0, 12)}`, 'fake-chaos') })),
        { kind: 'routed' },
      ),
  });
  const sessionService = new InMemorySessionService();
  const runner = new SessionRunner({ trees, sessionService, events: stream });

  // ---- invariant 1 and 3: the snapshot as any reader sees it ----
  let lastVersion = 0;
  let lastDigest = '';
  const seenSnapshots = new WeakSet<Snapshot>();
  const checkSnapshot = (s: Snapshot | undefined, where: string): Snapshot => {
    check(s !== undefined, `${where}: no snapshot published`);
    if (seenSnapshots.has(s)) return s;
    check(Object.isFrozen(s) && Object.isFrozen(s.agents), `${where}: snapshot v${s.version} is not frozen`);
    const names = s.agents.map((a) => a.localName);
    for (let i = 1; i < names.length; i++) check(names[i - 1]! < names[i]!, `${where}: agents not sorted / duplicated at ${names[i - 1]}, ${names[i]}`);
    check(snapshotDigest(s.agents) === s.digest, `${where}: v${s.version} digest does not match its agents`);
    for (const a of s.agents) {
      check(Object.isFrozen(a), `${where}: agent ${a.localName} not frozen`);
      check(!invalidBodies.has(a.rawSha256), `${where}: ${a.localName} carries an invalid body ${a.rawSha256.slice(0, 12)}`);
      check(validBodies.get(a.rawSha256) === a.baseUrl, `${where}: ${a.localName} carries body ${a.rawSha256.slice(0, 12)} that ${a.baseUrl} never served as a valid card`);
    }
    check(s.version >= lastVersion, `${where}: version went back from ${lastVersion} to ${s.version}`);
    check(s.version > lastVersion || s.digest === lastDigest || lastVersion === 0, `${where}: digest changed without a new version`);
    lastVersion = s.version;
    lastDigest = s.digest;
    seenSnapshots.add(s);
    return s;
  };

  // ---- readers: pinned sessions ----
  interface Reader {
    id: string;
    root: BaseAgent;
    digest: string;
    gen: number;
  }
  const readers: Array<Reader | undefined> = new Array(READERS).fill(undefined);
  const generation = new Array<number>(READERS).fill(0);
  let turns = 0;
  let restarts = 0;
  let ends = 0;
  let upgrades = 0;
  let refusedUpgrades = 0;
  const agentsOf = (digest: string) => loop.snapshots.get(digest)?.agents.map((a) => a.localName);
  const pinNew = (slot: number) => {
    const id = `r${slot}-g${generation[slot]!++}`;
    const p = trees.pin(id);
    check(p.restartedFrom === undefined, `new session ${id} claims to restart`);
    check(p.digest === loop.current()!.digest, `new session ${id} pinned to ${p.digest.slice(0, 12)}, not the current snapshot`);
    readers[slot] = { id, root: p.root, digest: p.digest, gen: generation[slot]! };
  };
  /** The reader's view of its pinned tree, through rootFor; handles an idled-out return. */
  const touch = (slot: number): Reader => {
    const r = readers[slot]!;
    if (expiredSessions.has(r.id)) {
      expiredSessions.delete(r.id);
      check(trees.digestOf(r.id) === undefined, `${r.id} expired but is still pinned`);
      const p = trees.pin(r.id);
      check(p.restartedFrom === r.digest, `${r.id} returned after expiring: restartedFrom ${p.restartedFrom?.slice(0, 12)} ≠ ${r.digest.slice(0, 12)}`);
      check(p.digest === loop.current()!.digest, `${r.id} restarted on a snapshot that is not current`);
      restarts++;
      readers[slot] = { ...r, root: p.root, digest: p.digest };
      return readers[slot]!;
    }
    const root = trees.rootFor(r.id);
    check(root === r.root, `${r.id} got another root object while pinned (pinned ${r.digest.slice(0, 12)}, now ${trees.digestOf(r.id)?.slice(0, 12)})`);
    check(trees.digestOf(r.id) === r.digest, `${r.id} is pinned to another digest`);
    check(loop.snapshots.get(r.digest) !== undefined, `${r.id}'s snapshot ${r.digest.slice(0, 12)} is no longer retained`);
    return r;
  };
  const MESSAGES = ['I need support with my order', 'a billing question about my invoice', 'hello there', 'support please, billing too'];
  const readersAct = async () => {
    let turnBudget = cycle % 2 === 0 ? 2 : 1;
    for (let slot = 0; slot < READERS; slot++) {
      const sleepy = slot >= READERS / 2; // these come back rarely: their pins idle out
      if (!chance(sleepy ? 0.02 : 0.3)) continue;
      if (readers[slot] === undefined) {
        pinNew(slot);
        continue;
      }
      const r = touch(slot);
      const roll = rng();
      if (roll < 0.04) {
        readers[slot] = undefined; // first, so the probe stops using it
        await runner.end(r.id);
        ends++;
        check(trees.digestOf(r.id) === undefined, `${r.id} still pinned after end`);
      } else if (roll < 0.07) {
        // An explicit upgrade at a turn boundary: the only other way a pinned session changes tree.
        const current = loop.current()!;
        try {
          const up = await runner.upgrade(r.id);
          check(up.from === r.digest && up.to === current.digest, `${r.id} upgraded from ${up.from.slice(0, 12)} to ${up.to.slice(0, 12)}`);
          const root = trees.rootFor(r.id);
          check(up.changed || root === r.root, `${r.id}'s root changed on an upgrade that changed nothing`);
          readers[slot] = { ...r, root, digest: up.to };
          upgrades++;
        } catch (err) {
          check(isDiscoveryError(err) && err.code === 'ERR_UPGRADE_REFUSED', `${r.id}'s upgrade threw ${String(err)}`);
          check(trees.rootFor(r.id) === r.root && trees.digestOf(r.id) === r.digest, `${r.id} lost its tree on a refused upgrade`);
          refusedUpgrades++;
        }
      } else if (roll < 0.5 && turnBudget > 0) {
        turnBudget--;
        const msg = pick(MESSAGES);
        const turn = await runner.run(r.id, msg);
        turns++;
        check(turn.digest === r.digest, `${r.id}'s turn ran on ${turn.digest.slice(0, 12)}, pinned to ${r.digest.slice(0, 12)}`);
        check(turn.error === undefined, `${r.id}'s turn failed: ${turn.error}`);
        const names = agentsOf(r.digest);
        check(names !== undefined && turn.author !== undefined && names.includes(turn.author), `${r.id}'s turn answered by ${turn.author}, not an agent of its pinned snapshot`);
        check(turn.reply === `${turn.author}@${r.digest.slice(0, 12)}`, `${r.id}'s reply ${JSON.stringify(turn.reply)} did not come from its pinned tree`);
        check(trees.rootFor(r.id) === r.root, `${r.id}'s root changed during its turn`);
      }
    }
  };

  // ---- chaos: one behaviour change to one endpoint ----
  const removedHits = new Map<Peer, number>();
  let hangs = 0;
  let registryWipedUntil = -1;
  const wiped = new Set<Peer>();
  const chaos = () => {
    const changes = Math.floor(rng() * 4); // 0–3 endpoints change per cycle
    let registryChanged = false;
    for (let k = 0; k < changes; k++) {
      const p = pick(peers);
      const r = rng();
      if (r < 0.25) p.ep.set({ mode: 'ok', latencyMs: 0 }); // healthy
      else if (r < 0.31) p.ep.set({ mode: 'ok', latencyMs: 2 + Math.floor(rng() * 30) }); // slow (real ms, under the deadline)
      else if (r < 0.43) p.ep.set({ mode: 'status', status: pick([500, 503, 404, 429]) }); // failing
      else if (r < 0.51) {
        // malformed: not JSON, or JSON that is no card
        const body = pick(['{"name": "broken", "skills": [', JSON.stringify({ name: p.ep.id, description: 'no card' }), JSON.stringify({ ...cardOf(p, p.version + 1, p.tag), skills: 'nope' })]);
        invalidBodies.add(sha(body));
        p.ep.set({ mode: 'malformed', body });
      } else if (r < 0.65) {
        // changed: a new version, maybe another tag (static agents keep their reviewed tag)
        p.version++;
        if (!p.static && chance(0.3)) p.tag = pick(CARD_TAGS);
        setCard(p);
        if (p.ep.mode.mode === 'malformed' || p.ep.mode.mode === 'status') p.ep.set({ mode: 'ok' });
      } else if (r < 0.71) p.ep.set({ cacheControl: pick(CACHE_CONTROLS) });
      else if (r < 0.745) p.ep.set({ mode: pick<'etag-churn' | 'etag-stuck'>(['etag-churn', 'etag-stuck']) });
      else if (r < 0.75) {
        // hang: real time, so at most one at a time and only for a few cycles
        if (!peers.some((q) => q.hangUntil !== undefined)) {
          p.ep.set({ mode: 'hang' });
          p.hangUntil = cycle + 1 + Math.floor(rng() * 2);
          hangs++;
        }
      } else if (r < 0.88) {
        if (!p.static && p.inRegistry && !wiped.has(p)) {
          p.inRegistry = false; // removed
          removedHits.set(p, p.ep.hits);
          registryChanged = true;
        }
      } else if (!p.static && !p.inRegistry && !wiped.has(p)) {
        p.inRegistry = true; // re-added
        removedHits.delete(p);
        registryChanged = true;
      }
    }
    for (const p of peers) {
      if (p.hangUntil !== undefined && cycle >= p.hangUntil) {
        p.hangUntil = undefined;
        p.ep.set({ mode: 'ok' });
      }
    }
    // Rarely the registry loses most of its list for a few cycles (the mass-removal guard's case).
    if (registryWipedUntil < 0 && cycle > 50 && chance(0.003)) {
      for (const p of peers) {
        if (!p.static && p.inRegistry && chance(0.8)) {
          p.inRegistry = false;
          removedHits.set(p, p.ep.hits);
          wiped.add(p);
        }
      }
      registryWipedUntil = cycle + 1 + Math.floor(rng() * 25);
      registryChanged = true;
    } else if (registryWipedUntil >= 0 && cycle >= registryWipedUntil) {
      for (const p of wiped) {
        p.inRegistry = true;
        removedHits.delete(p);
      }
      wiped.clear();
      registryWipedUntil = -1;
      registryChanged = true;
    }
    if (registryChanged) publishRegistry(); // the source notifies: the loop runs a cycle at once
  };

  // ---- the per-cycle invariants (2–8) ----
  let prevSnapshot: Snapshot | undefined;
  const checkCycle = async () => {
    check(problems.length === 0, problems.join('; '));
    const s = checkSnapshot(loop.current(), 'after the cycle');

    // 6: caps
    check(wire.peak <= MAX_CONCURRENT, `${wire.peak} fetches in flight at once (cap ${MAX_CONCURRENT})`);
    check(wire.peakPerOrigin <= MAX_PER_ORIGIN, `${wire.peakPerOrigin} fetches in flight to one origin (cap ${MAX_PER_ORIGIN})`);
    check(cache.concurrency.peak <= MAX_CONCURRENT, `the cache's limiter peaked at ${cache.concurrency.peak}`);
    check(cache.concurrency.running === 0 && wire.running === 0, 'fetches still in flight between cycles');

    // 7: removed endpoints stop being requested
    for (const [p, hits] of removedHits) check(p.ep.hits === hits, `${p.ep.baseUrl} was requested ${p.ep.hits - hits} time(s) after no source proposed it`);

    // 4: health, cache and the published snapshot agree
    const status = await loop.status();
    const byBase = new Map<string, EndpointStatus>(status.map((st) => [st.baseUrl, st]));
    for (const st of status) {
      const h = st.health;
      if (h && st.cache) check(h.failures === st.cache.failures || st.state.verdict === 'gone', `${st.baseUrl}: health counts ${h.failures} failures, the cache ${st.cache.failures}`);
      if (h?.state === 'removed') {
        check(!h.critical && !critical.has(st.baseUrl), `critical ${st.baseUrl} is removed`);
        check(h.successes > 0 || !h.usable || answeredSinceRemoval.has(st.baseUrl), `${st.baseUrl} is removed although its card is usable and it has not answered since it left (${h.reason})`);
        const claimed = /(\d+) consecutive (?:failed fetch|refused card)/.exec(h.reason);
        check(claimed === null || Number(claimed[1]) >= LEAVE_AFTER, `${st.baseUrl} is removed, its reason says after fewer than ${LEAVE_AFTER} failures (${h.reason})`);
      }
      if (st.cache?.usable && h && (h.state === 'healthy' || h.state === 'degraded') && st.admitted && st.state.verdict !== 'gone') {
        if (st.verdict?.verdict === 'selected') check(s.agents.some((a) => a.baseUrl === st.baseUrl), `${st.baseUrl} is a selected member with a usable card but is not in v${s.version}`);
      }
      if (st.state.verdict === 'selected' || st.state.verdict === 'degraded') check(s.agents.some((a) => a.baseUrl === st.baseUrl), `${st.baseUrl} shows ${st.state.verdict} but is not in v${s.version}`);
    }
    for (const a of s.agents) {
      const st = byBase.get(a.baseUrl);
      check(st === undefined ? loop.held !== undefined : ['selected', 'degraded', 'held'].includes(st.state.verdict), `${a.localName} is in v${s.version} but its endpoint shows ${st?.state.verdict ?? 'nothing'}`);
    }
    if (prevSnapshot && prevSnapshot !== s) {
      const now = new Set(s.agents.map((a) => a.localName));
      for (const a of prevSnapshot.agents) {
        if (now.has(a.localName)) continue;
        const st = byBase.get(a.baseUrl);
        const why = st?.state.verdict;
        check(
          // `refused`: fetched, and its card refused (issue 42's word for what read `pending` before).
          why === undefined || why === 'gone' || why === 'unsuitable' || why === 'excluded' || why === 'removed' || why === 'pending' || why === 'refused',
          `${a.localName} left v${s.version} while its endpoint shows ${why} (${st?.state.reason})`,
        );
        if (why === 'removed') check(!st!.health!.usable || st!.health!.successes > 0, `${a.localName} was dropped with a usable card (${st!.health!.reason})`);
      }
    }
    prevSnapshot = s;

    // 5: alerts pair with resolutions; the unresolved ones are exactly loop.activeAlerts
    const active = loop.activeAlerts;
    check(active.length === activeKeys.size && active.every((k) => activeKeys.has(k)), `activeAlerts ${JSON.stringify(active)} ≠ unresolved alerts ${JSON.stringify([...activeKeys])}`);

    // 2 and 8: pins, retained snapshots, roots and ADK sessions are bounded by the live readers
    const live = readers.filter((r): r is Reader => r !== undefined && !expiredSessions.has(r.id));
    const pinned = trees.sessions();
    check(trees.stats.pinned === live.length && pinned.length === live.length, `${trees.stats.pinned} sessions pinned, ${live.length} readers hold one`);
    for (const r of live) check(trees.digestOf(r.id) === r.digest, `${r.id} is pinned to ${trees.digestOf(r.id)?.slice(0, 12)}, not ${r.digest.slice(0, 12)}`);
    const pinnedDigests = new Set(live.map((r) => r.digest));
    const retained = loop.snapshots.retained();
    for (const rs of retained) {
      const refs = live.filter((r) => r.digest === rs.digest).length;
      check(rs.references === refs, `snapshot v${rs.version} has ${rs.references} references, ${refs} pins`);
      check(rs.current || refs > 0, `snapshot v${rs.version} is retained with no pin and not current`);
    }
    check(retained.length <= pinnedDigests.size + 1, `${retained.length} snapshots retained for ${pinnedDigests.size} pinned digests`);
    const built = trees.builtDigests;
    const unretainedRoots = built.filter((d) => loop.snapshots.get(d) === undefined);
    check(unretainedRoots.length <= 1 && built.length <= pinnedDigests.size + 2, `${built.length} roots built (${unretainedRoots.length} for unretained snapshots), ${pinnedDigests.size} pinned digests`);
    const adk = (await sessionService.listSessions({ appName: runner.appName })).sessions.map((x) => x.id);
    const pinnedIds = new Set(pinned.map((p) => p.sessionId));
    check(adk.length <= READERS && adk.every((id) => pinnedIds.has(id)), `ADK sessions ${JSON.stringify(adk)} outlive their pins ${JSON.stringify([...pinnedIds])}`);
    check(runner.runnerDigests.every((d) => built.includes(d)), 'a runner outlives its root');

    // 3: nothing invalid in the cache either (every so often: it walks every entry)
    if (cycle % 25 === 0) {
      for (const e of await cache.entries()) {
        check(validBodies.get(e.rawSha256) === e.baseUrl, `the cache holds body ${e.rawSha256.slice(0, 12)} for ${e.baseUrl}, never served there as a valid card`);
      }
    }
  };

  /** One refresh cycle with readers and a snapshot probe running alongside it. */
  const runCycle = async (step: number) => {
    await clock.advance(step); // idle pins expire on the factory's timer here
    let done = false;
    const running = loop.refreshNow().finally(() => {
      done = true;
    });
    // A probe on every event-loop tick while the cycle runs: the snapshot is always whole.
    const probe = (async () => {
      while (!done) {
        checkSnapshot(loop.current(), 'during the cycle');
        for (let slot = 0; slot < READERS; slot++) {
          const r = readers[slot];
          if (r && !expiredSessions.has(r.id)) check(trees.rootFor(r.id) === r.root, `${r.id} got another root during a cycle`);
        }
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    })();
    const t0 = performance.now();
    await readersAct();
    const t1 = performance.now();
    await running;
    await probe;
    const t2 = performance.now();
    await checkCycle();
    timing.readers += t1 - t0;
    timing.cycle += t2 - t1;
    timing.checks += performance.now() - t2;
  };

  let stepsMs = 0;
  let healCycles = 0;
  const timing = { readers: 0, cycle: 0, checks: 0 };
  try {
    await loop.start();
    cycle = 0;
    checkSnapshot(loop.current(), 'after start');
    for (cycle = 1; cycle <= CYCLES; cycle++) {
      chaos();
      // Mostly short steps; now and then a long one, so cards expire, stale bounds pass and grace periods end.
      const step = chance(0.03) ? 20_000 + Math.floor(rng() * 40_000) : 500 + Math.floor(rng() * 2_500);
      stepsMs += step;
      if (loop.held !== undefined && chance(0.1)) await loop.confirmRemovals();
      await runCycle(step);
    }

    // ---- heal: every endpoint answers again, every registry endpoint is proposed ----
    cycle = CYCLES + 1;
    for (const p of peers) {
      p.hangUntil = undefined;
      p.ep.set({ mode: 'ok', latencyMs: 0, cacheControl: 'max-age=30' });
      p.inRegistry = !p.static;
    }
    wiped.clear();
    removedHits.clear();
    publishRegistry();
    // Bounded: converges within a few backoff caps; a real-time deadline missed under load only delays it.
    const lastingAlerts = () => loop.activeAlerts.filter((k) => /^(removed|critical-|held|publish-refused|source-error)/.test(k));
    let unsettled: string[] = [];
    for (let i = 0; i < HEAL_MAX_CYCLES; i++, cycle++) {
      await runCycle(2_000);
      healCycles++;
      if (i < HEAL_MIN_CYCLES) continue;
      unsettled = (await loop.status())
        .filter((st) => !['selected', 'unsuitable', 'excluded'].includes(st.state.verdict))
        .map((st) => `${st.baseUrl} shows ${st.state.verdict}: ${st.state.reason} (last error: ${st.cache?.lastError?.message ?? 'none'})`);
      if (unsettled.length === 0 && lastingAlerts().length === 0 && loop.held === undefined) break;
    }
    check(unsettled.length === 0, `after healing, ${unsettled.length} endpoint(s) still unsettled: ${unsettled.slice(0, 3).join('; ')}`);
    check(lastingAlerts().length === 0, `after healing, alerts still active: ${lastingAlerts().join(', ')}`);
    check(loop.held === undefined, 'after healing, a removal is still held');

    // ---- end every session: everything retained goes away but the current snapshot ----
    for (let slot = 0; slot < READERS; slot++) {
      const r = readers[slot];
      if (!r) continue;
      if (!expiredSessions.has(r.id)) await runner.end(r.id);
      readers[slot] = undefined;
    }
    await runner.close();
    check(trees.stats.pinned === 0, `${trees.stats.pinned} pins left after every session ended`);
    check(loop.snapshots.retained().length === 1, `${loop.snapshots.retained().length} snapshots retained with no session`);
    check(trees.builtDigests.length <= 2, `${trees.builtDigests.length} roots built with no session`);
    check((await sessionService.listSessions({ appName: runner.appName })).sessions.length === 0, 'ADK sessions left after every session ended');
  } catch (err) {
    if (err instanceof Error && !err.message.includes(`CHAOS_SEED=${SEED}`)) err.message = `${tag()}: ${err.message}`;
    throw err;
  } finally {
    trees.close();
    await loop.stop();
    await cache.close();
    await fetcher.close();
  }

  console.log('# timing', JSON.stringify(timing));
  const wallMs = Math.round(performance.now() - wallStart);
  const c = (k: string) => counts.get(k) ?? 0;
  console.log(
    `# chaos CHAOS_SEED=${SEED}: ${CYCLES} cycles (+${healCycles} healing) over ${Math.round(stepsMs / 1000)} virtual s in ${wallMs} ms wall; ` +
      `${wire.requests} requests (peak ${wire.peak} in flight, ${wire.peakPerOrigin} per origin); ` +
      `card results: changed ${c('card.changed')}, unchanged ${c('card.unchanged')}, revalidated ${c('card.revalidated')}, stale ${c('card.stale')}, invalid ${c('card.invalid')}, failed ${c('card.failed')}; ` +
      `${c('snapshot.published')} publications (v${lastVersion}), ${c('snapshot.held')} held, ${trees.builds} roots built (${racedWarmups} warm-ups swept by a concurrent release); ` +
      `${turns} turns, ${c('session.pinned')} pins, ${ends} ended, ${upgrades} upgraded (${refusedUpgrades} refused), ${c('session.expired')} expired, ${restarts} restarted; ` +
      `${hangs} hangs, ${spuriousTimeouts.length} timeouts of endpoints that were not hanging${spuriousTimeouts.length > 0 ? ` (first: ${spuriousTimeouts[0]})` : ''}; endpoints gone ${c('endpoint.gone')}, evicted ${c('endpoint.evicted')}; health.changed ${c('health.changed')}; ` +
      `alerts: ${[...counts].filter(([k]) => k.startsWith('alert:')).map(([k, v]) => `${k.slice(6)} ${v}`).join(', ')}; resolved ${c('alert.resolved')}`,
  );
});
