/**
 * What health from real calls costs (issue 41; figures in docs/benchmarks.md, "Issue 41: health
 * from real calls"). Five parts, each alone with `--part <name>`, all by default:
 *
 * 1. `turns`: the orchestrator's own CPU time per chat turn — `SessionRunner.run` → routed root →
 *    `V1RemoteAgent` → a real @a2a-js/sdk 1.x peer on 127.0.0.1, through the policy fetch — in
 *    three settings of the same process, interleaved round by round (order rotated):
 *    - `none`: `calls` unset (no accounting);
 *    - `record`: a `CallHealth` as `SessionRunnerOptions.calls`, and a `Rollouts` fed from it as
 *      the loop wires it (`calls.onCall((c) => rollouts.record(c))`), with a rollout in progress
 *      whose candidate is the sessions' snapshot, so every call is counted on a side (the most a
 *      turn records);
 *    - `service`: the same, and the routed root reads `calls.score` at each decision, as the
 *      service wires it. The two peers' agents carry the same tag and the message names it, so
 *      every turn is a tie the record decides (two `score` reads per turn, the worst case).
 *    The peers run in a child process, so this process's CPU time is the orchestrator's own (the
 *    peer's work is not in it); the wall time per turn (peer included) is reported beside it.
 * 2. `micro`: ns per call of `CallHealth.record` (ok turn calls over 1,000 agents, with the
 *    `Rollouts` listener; with and without a rollout in progress), `CallFigures.percentile(95)`
 *    over a full latency window and `CallHealth.score`, against a bare and an awaited `Map.get`
 *    (batches timed whole with `process.hrtime.bigint()`, never per call; order rotated).
 * 3. `memory`: heap bytes per agent of a `CallHealth` after 10,000 agents × N turn calls each
 *    (one digest, one interface), in a fresh `--expose-gc` child per size and round.
 * 4. `checks`: the active check's requests per agent per hour: by arithmetic from the interval
 *    (`BENCH_CHECK_INTERVAL_S`, default 60) and its jitter (±10 %, `ActiveCheck`'s own), and
 *    measured: `ActiveCheck` on a virtual clock for one model hour against 10 loopback 1.x peers
 *    (one agent each, 3 rounds with different seeds), the requests counted at each peer.
 * 5. `fetch` (issue 43): client CPU per A2A call of the policy fetch the remote agents send through
 *    (`createPolicyFetch`), against undici's raw `request()` and undici's own `fetch` on an Agent
 *    of their own: a JSON-RPC `GetTask` POSTed to a 1.x peer in the child process (the peer's CPU
 *    is not in it), the body read as JSON; batches of BENCH_FETCH_CALLS (default 500), order
 *    rotated per round, ratios to raw `request()` paired per round.
 *
 * Environment: BENCH_ROUNDS (turn and fetch rounds, default 9), BENCH_TURNS (turns per setting and round,
 * default 150), BENCH_MICRO_ROUNDS (default 15), BENCH_MEMORY_ROUNDS (default 2),
 * BENCH_MEMORY_CALLS (calls per agent, comma-separated, default 1,100,600: 600 fills the
 * 512-latency windows).
 * Run: `npm run bench:calls` (about 2–3 minutes). Writes bench/results/calls.json.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { setImmediate as tick } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Agent, fetch as undiciFetch, request } from 'undici';
import { createPolicyFetch, SessionRunner, snapshotTreeBuilder, TreeFactory } from '../packages/core/src/adk/index.js';
import { parseAgentCard } from '../packages/core/src/card/index.js';
import { seededRandom, systemClock, VirtualClock } from '../packages/core/src/clock/index.js';
import { HostPolicy } from '../packages/core/src/fetch/index.js';
import { CallFigures } from '../packages/core/src/health/call-figures.js';
import { ActiveCheck, CallHealth, type RecordedCall } from '../packages/core/src/health/index.js';
import { Rollouts } from '../packages/core/src/rollout/index.js';
import { buildSnapshot, SnapshotStore, type Snapshot, type SnapshotAgent } from '../packages/core/src/snapshot/index.js';
import { startV1Server } from '../test/helpers/a2a-v1-server.js';
import { machineMeta, writeResults } from './lib/results.js';
import { fmt, fmtSummary, summarize, table, type Summary } from './lib/stats.js';
import { envCount, envCounts, envNumber } from './lib/env.js';

const SELF = fileURLToPath(import.meta.url);
const ROUNDS = envCount('BENCH_ROUNDS', 9, 100);
const TURNS = envCount('BENCH_TURNS', 150, 100_000);
const WARMUP_TURNS = 100;
const MICRO_ROUNDS = envCount('BENCH_MICRO_ROUNDS', 15, 100);
const MEMORY_ROUNDS = envCount('BENCH_MEMORY_ROUNDS', 2, 100);
const MEMORY_CALLS = envCounts('BENCH_MEMORY_CALLS', [1, 100, 600], 100_000);
const MEMORY_AGENTS = 10_000;
const CHECK_INTERVAL_S = envNumber('BENCH_CHECK_INTERVAL_S', 60, { min: 1, max: 3_600, integer: false });
/** `ActiveCheck`'s spread: each interval is drawn from [0.9, 1.1] × the interval. */
const CHECK_JITTER = 0.1;
/** Target of issue 41: call accounting adds at most this share of the orchestrator's own time per turn. */
const TURN_OVERHEAD_LIMIT = 0.02;
const MESSAGE = 'Is serial 123 under warranty?';

// ---- 1. turns ---------------------------------------------------------------------------------

type Setting = 'none' | 'record' | 'service';
const SETTINGS: readonly Setting[] = ['none', 'record', 'service'];

interface PeerInfo {
  baseUrl: string;
  card: Record<string, unknown>;
}

/** The peers' process: two 1.x peers on loopback; answers `{ peers }`, then `{ requests }` on `count`. */
async function peersChild(): Promise<void> {
  const peers = [await startV1Server({ prefix: 'peer a', name: 'Warranty Agent A' }), await startV1Server({ prefix: 'peer b', name: 'Warranty Agent B' })];
  const closeAll = async (): Promise<void> => {
    await Promise.all(peers.map((p) => p.close()));
    process.exit(0);
  };
  process.on('message', (m: { type: string }) => {
    if (m.type === 'count') process.send?.({ type: 'count', requests: peers.map((p) => p.requests) });
    else if (m.type === 'close') void closeAll();
  });
  process.on('disconnect', () => void closeAll());
  process.send?.({ type: 'peers', peers: peers.map((p): PeerInfo => ({ baseUrl: p.baseUrl, card: p.card })) });
}

function startPeers(): Promise<{ child: ChildProcess; peers: PeerInfo[] }> {
  return new Promise((resolve, reject) => {
    const child = fork(SELF, ['--child', 'peers'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the peers' process exited (${code})`)));
    child.once('message', (m: { peers: PeerInfo[] }) => resolve({ child, peers: m.peers }));
  });
}

function requestsAt(child: ChildProcess): Promise<number[]> {
  return new Promise((resolve) => {
    child.once('message', (m: { requests: number[] }) => resolve(m.requests));
    child.send({ type: 'count' });
  });
}

function agentOf(peer: PeerInfo, localName: string): SnapshotAgent {
  const parsed = parseAgentCard(JSON.stringify(peer.card), { allowLoopback: true });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return {
    localName,
    description: 'Reviewed warranty agent.',
    tags: ['warranty'],
    critical: true,
    baseUrl: peer.baseUrl,
    sources: ['config'],
    card: parsed.card!,
    canonicalSha256: parsed.canonicalSha256!,
    rawSha256: parsed.rawSha256,
    protocolVersion: parsed.protocolVersion!,
    degraded: false,
    stale: false,
  };
}

/** A `CallHealth` that times its own `record` and `score` inside real turns (the in-turn cost, read directly). */
class TimedCallHealth extends CallHealth {
  recordMs = 0;
  records = 0;
  scoreMs = 0;
  scores = 0;
  override record(call: RecordedCall): void {
    const t0 = performance.now();
    super.record(call);
    this.recordMs += performance.now() - t0;
    this.records++;
  }
  override score(baseUrl: string): number {
    const t0 = performance.now();
    const s = super.score(baseUrl);
    this.scoreMs += performance.now() - t0;
    this.scores++;
    return s;
  }
}

interface Side {
  /** Mean ms per turn: wall, this process's CPU, and the time inside `CallHealth.record` and `score`. */
  run(turns: number): Promise<{ wall: number; cpu: number; accounting: number }>;
  close(): Promise<void>;
  calls?: TimedCallHealth;
  rollouts?: Rollouts;
}

/** One setting's runner over the shared snapshot; each turn on a new session (ended after, untimed). */
function side(setting: Setting, store: SnapshotStore, snapshot: Snapshot, policy: HostPolicy): Side {
  const calls = setting === 'none' ? undefined : new TimedCallHealth(systemClock);
  let rollouts: Rollouts | undefined;
  let off: (() => void) | undefined;
  if (calls !== undefined) {
    rollouts = new Rollouts({ snapshots: store, clock: systemClock });
    off = calls.onCall((c) => rollouts!.record(c));
    // A rollout in progress whose candidate is the sessions' snapshot: every turn is counted on it.
    rollouts.stage('bench', [{ localName: 'warranty_a', impact: 'breaking', reasons: ['bench'], version: 'v2' }], snapshot, snapshot);
  }
  const record = setting === 'service' ? (baseUrl: string) => calls!.score(baseUrl) : undefined;
  const buildRoot = snapshotTreeBuilder({ root: { kind: 'routed', ...(record !== undefined && { record }) }, policy });
  const trees = new TreeFactory({ snapshots: store, buildRoot });
  const sessions = new SessionRunner({ trees, ...(calls !== undefined && { calls }) });
  let n = 0;
  return {
    ...(calls !== undefined && { calls }),
    ...(rollouts !== undefined && { rollouts }),
    async run(turns) {
      let wall = 0;
      let cpu = 0;
      const spent0 = (calls?.recordMs ?? 0) + (calls?.scoreMs ?? 0);
      for (let i = 0; i < turns; i++) {
        const id = `${setting}-${n++}`;
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        const turn = await sessions.run(id, MESSAGE);
        wall += performance.now() - t0;
        const c = process.cpuUsage(c0);
        cpu += (c.user + c.system) / 1000;
        if (turn.error !== undefined) throw new Error(`${setting}: ${turn.error}`);
        await sessions.end(id);
      }
      const spent = (calls?.recordMs ?? 0) + (calls?.scoreMs ?? 0) - spent0;
      return { wall: wall / turns, cpu: cpu / turns, accounting: spent / turns };
    },
    async close() {
      off?.();
      rollouts?.close();
      await sessions.close();
      trees.close();
      await buildRoot.close();
    },
  };
}

interface TurnsReport {
  rounds: number;
  turnsPerRound: number;
  /** ms per turn, per setting: the per-round means. */
  cpu: Record<Setting, number[]>;
  wall: Record<Setting, number[]>;
  /** ms per turn inside `CallHealth.record` (with its rollout listener) and `CallHealth.score`, timed in the turns themselves. */
  accounting: Record<Setting, number[]>;
  /** The per-round ratio of each setting's CPU per turn to `none`'s in the same round. */
  cpuRatio: Record<'record' | 'service', Summary>;
  wallRatio: Record<'record' | 'service', Summary>;
  /** JSON-RPC calls the peers answered, per setting's turn (1 each, or the figures would lie). */
  peerCallsPerTurn: number;
  /** Calls counted per agent by the `service` setting's CallHealth, and the rollout's candidate turns. */
  counted: Record<string, number>;
  rolloutTurns: number;
}

async function turnsPart(): Promise<TurnsReport> {
  const { child, peers } = await startPeers();
  try {
    const agents = [agentOf(peers[0]!, 'warranty_a'), agentOf(peers[1]!, 'warranty_b')];
    const store = new SnapshotStore();
    const snapshot = buildSnapshot(agents, 1, Date.now());
    store.publish(snapshot);
    const policy = HostPolicy.from({ allow: peers.map((p) => new URL(p.baseUrl).origin), allowLoopback: true });
    const sides = Object.fromEntries(SETTINGS.map((s) => [s, side(s, store, snapshot, policy)])) as Record<Setting, Side>;
    for (const s of SETTINGS) await sides[s].run(WARMUP_TURNS);
    const cpu: Record<Setting, number[]> = { none: [], record: [], service: [] };
    const wall: Record<Setting, number[]> = { none: [], record: [], service: [] };
    const accounting: Record<Setting, number[]> = { none: [], record: [], service: [] };
    const before = (await requestsAt(child)).reduce((a, b) => a + b, 0);
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < SETTINGS.length; k++) {
        const s = SETTINGS[(r + k) % SETTINGS.length]!;
        const m = await sides[s].run(TURNS);
        cpu[s].push(m.cpu);
        wall[s].push(m.wall);
        accounting[s].push(m.accounting);
      }
      process.stderr.write(`turns: round ${r + 1}/${ROUNDS}\n`);
    }
    const after = (await requestsAt(child)).reduce((a, b) => a + b, 0);
    const ratio = (x: Record<Setting, number[]>, s: Setting): Summary => summarize(x[s].map((v, i) => v / x.none[i]!));
    const service = sides.service;
    const counted = Object.fromEntries((service.calls?.views() ?? []).map((v) => [v.agent, v.all.calls]));
    const rolloutTurns = service.rollouts?.figures()?.candidate['*']?.calls ?? 0;
    for (const s of SETTINGS) await sides[s].close();
    return {
      rounds: ROUNDS,
      turnsPerRound: TURNS,
      cpu,
      wall,
      accounting,
      cpuRatio: { record: ratio(cpu, 'record'), service: ratio(cpu, 'service') },
      wallRatio: { record: ratio(wall, 'record'), service: ratio(wall, 'service') },
      peerCallsPerTurn: (after - before) / (ROUNDS * TURNS * SETTINGS.length),
      counted,
      rolloutTurns,
    };
  } finally {
    child.send({ type: 'close' });
  }
}

// ---- 2. micro ---------------------------------------------------------------------------------

const SLOTS = 16_384;
const MASK = SLOTS - 1;
const MICRO_AGENTS = 1_000;

interface MicroCase {
  name: string;
  batch: number;
  run(batch: number): number | Promise<number>;
}

let seed = 42;
/** A latency between 2 and 12 ms, different call to call (a sorted or constant window would flatter the percentile). */
function latency(): number {
  seed = (seed * 16_807) % 2_147_483_647;
  return 2 + (seed % 10_000) / 1_000;
}

/** An ok turn call of agent `j`. */
function turnCall(j: number, digest: string): RecordedCall {
  return { agent: `agent_${j}`, baseUrl: `http://127.0.0.1:9/a${j}/`, digest, interfaceUrl: `http://127.0.0.1:9/a${j}/rpc`, ok: true, latencyMs: latency(), source: 'turn' };
}

/** A health fed as the loop feeds it: every call also goes to a `Rollouts` (with a rollout in progress when `live`). */
function fedHealth(live: boolean): { health: CallHealth; digest: string } {
  const store = new SnapshotStore();
  const snapshot = buildSnapshot([], 1, Date.now());
  store.publish(snapshot);
  const health = new CallHealth(systemClock);
  const rollouts = new Rollouts({ snapshots: store, clock: systemClock });
  health.onCall((c) => rollouts.record(c));
  if (live) rollouts.stage('bench', [{ localName: 'agent_0', impact: 'breaking', reasons: ['bench'], version: 'v2' }], snapshot, snapshot);
  return { health, digest: snapshot.digest };
}

async function microChild(): Promise<Record<string, number[]>> {
  const idle = fedHealth(false);
  const live = fedHealth(true);
  const idleCalls = Array.from({ length: SLOTS }, (_, i) => turnCall(i % MICRO_AGENTS, idle.digest));
  const liveCalls = Array.from({ length: SLOTS }, (_, i) => turnCall(i % MICRO_AGENTS, live.digest));
  const urls = idleCalls.map((c) => c.baseUrl);
  const map = new Map(urls.map((u, i) => [u, { n: i }]));
  // A full latency window (512 samples), and a health whose agents each have one.
  const figures = new CallFigures();
  for (let i = 0; i < 600; i++) figures.add(turnCall(0, idle.digest));
  const scored = fedHealth(false).health;
  for (let i = 0; i < MICRO_AGENTS * 600; i++) scored.record(turnCall(i % MICRO_AGENTS, idle.digest));
  let sink = 0;
  const cases: MicroCase[] = [
    {
      name: 'Map.get (bare)',
      batch: 200_000,
      run(b) {
        let s = 0;
        for (let i = 0; i < b; i++) s += map.get(urls[i & MASK]!)!.n;
        return s;
      },
    },
    {
      name: 'awaited Map.get',
      batch: 200_000,
      async run(b) {
        let s = 0;
        for (let i = 0; i < b; i++) s += (await map.get(urls[i & MASK]!))!.n;
        return s;
      },
    },
    {
      name: 'CallHealth.record (no rollout)',
      batch: 100_000,
      run(b) {
        for (let i = 0; i < b; i++) idle.health.record(idleCalls[i & MASK]!);
        return idle.health.size;
      },
    },
    {
      name: 'CallHealth.record (rollout in progress)',
      batch: 100_000,
      run(b) {
        for (let i = 0; i < b; i++) live.health.record(liveCalls[i & MASK]!);
        return live.health.size;
      },
    },
    {
      name: 'CallFigures.percentile(95), 512 samples',
      batch: 2_000,
      run(b) {
        let s = 0;
        for (let i = 0; i < b; i++) s += figures.percentile(95)!;
        return s;
      },
    },
    {
      name: 'CallHealth.score (512 samples)',
      batch: 2_000,
      run(b) {
        let s = 0;
        for (let i = 0; i < b; i++) s += scored.score(urls[i & MASK]!);
        return s;
      },
    },
  ];
  const ns: Record<string, number[]> = Object.fromEntries(cases.map((c) => [c.name, []]));
  for (let r = -3; r < MICRO_ROUNDS; r++) {
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(Math.max(r, 0) + k) % cases.length]!;
      const t0 = process.hrtime.bigint();
      sink += await c.run(c.batch);
      const dt = Number(process.hrtime.bigint() - t0);
      await tick();
      if (r >= 0) ns[c.name]!.push(dt / c.batch);
    }
  }
  if (sink === -1) console.error(sink);
  return ns;
}

// ---- 3. memory --------------------------------------------------------------------------------

interface MemoryRound {
  calls: number;
  heapBytesPerAgent: number;
  agents: number;
}

function memoryChild(callsPerAgent: number): MemoryRound {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  const digest = 'd'.repeat(64);
  // The agents' names and URLs exist anyway (the snapshot holds them): made before the first reading.
  const names = Array.from({ length: MEMORY_AGENTS }, (_, j) => `agent_${j}`);
  const urls = names.map((_, j) => `http://127.0.0.1:9/a${j}/`);
  const ifaces = names.map((_, j) => `http://127.0.0.1:9/a${j}/rpc`);
  const store = new SnapshotStore();
  const rollouts = new Rollouts({ snapshots: store, clock: systemClock });
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const health = new CallHealth(systemClock);
  health.onCall((c) => rollouts.record(c));
  for (let i = 0; i < callsPerAgent; i++) {
    for (let j = 0; j < MEMORY_AGENTS; j++) {
      health.record({ agent: names[j]!, baseUrl: urls[j]!, digest, interfaceUrl: ifaces[j]!, ok: (i + j) % 50 !== 0, ...((i + j) % 50 === 0 && { errorClass: 'http_503' }), latencyMs: latency(), source: 'turn' });
    }
  }
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  if (health.size !== MEMORY_AGENTS) throw new Error('agents lost');
  return { calls: callsPerAgent, agents: health.size, heapBytesPerAgent: (after - before) / MEMORY_AGENTS };
}

function memoryPart(): Record<number, Summary> {
  const rounds: Record<number, number[]> = Object.fromEntries(MEMORY_CALLS.map((n) => [n, []]));
  for (let r = 0; r < MEMORY_ROUNDS; r++) {
    for (let k = 0; k < MEMORY_CALLS.length; k++) {
      const n = MEMORY_CALLS[(r + k) % MEMORY_CALLS.length]!;
      rounds[n]!.push(inChild<MemoryRound>(['--expose-gc'], 'memory', String(n)).heapBytesPerAgent);
    }
  }
  return Object.fromEntries(MEMORY_CALLS.map((n) => [n, summarize(rounds[n]!)]));
}

// ---- 4. checks --------------------------------------------------------------------------------

const CHECK_AGENTS = 10;
const CHECK_ROUNDS = 3;

interface ChecksReport {
  intervalS: number;
  jitter: number;
  /** Long-run mean (the jitter is symmetric, so the mean interval is the interval). */
  meanPerAgentPerHour: number;
  /** Fewest and most checks one agent can get in its first hour: the first at any point of the first interval, then every interval at the jitter's bound. */
  minPerAgentPerHour: number;
  maxPerAgentPerHour: number;
  /** Measured: requests each peer (one agent each) received in one model hour, every agent of every round. */
  measured: { agents: number; rounds: number; perAgentPerHour: number[]; summary: Summary; sent: number; ok: number; peerRequests: number };
}

/**
 * Runs `ActiveCheck` at its defaults (interval from BENCH_CHECK_INTERVAL_S) on a virtual clock for
 * one model hour against {@link CHECK_AGENTS} loopback 1.x peers, one agent each, and counts the
 * requests at each peer. The clock moves one second at a time, each step after every check in
 * flight has answered.
 */
async function checksPart(): Promise<ChecksReport> {
  const hour = 3_600_000;
  const intervalMs = CHECK_INTERVAL_S * 1000;
  const peers = await Promise.all(Array.from({ length: CHECK_AGENTS }, (_, j) => startV1Server({ prefix: `checked ${j}` })));
  const perAgent: number[] = [];
  let sent = 0;
  let ok = 0;
  let peerRequests = 0;
  try {
    const targets = peers.map((p, j) => {
      const a = agentOf({ baseUrl: p.baseUrl, card: p.card }, `checked_${j}`);
      return { localName: a.localName, baseUrl: a.baseUrl, card: a.card };
    });
    const policy = HostPolicy.from({ allow: peers.map((p) => new URL(p.baseUrl).origin), allowLoopback: true });
    for (let r = 0; r < CHECK_ROUNDS; r++) {
      const before = peers.map((p) => p.requests);
      const clock = new VirtualClock();
      const policyFetch = createPolicyFetch({ policy });
      const check = new ActiveCheck({ targets: () => targets, policy, fetch: policyFetch, clock, random: seededRandom(r + 1), intervalMs, onResult: () => undefined });
      check.start();
      for (let t = 0; t < hour; t += 1_000) {
        await clock.advance(1_000);
        while (check.stats.inFlight > 0) await tick();
      }
      const stats = check.stats;
      await check.close();
      await policyFetch.close();
      sent += stats.sent;
      ok += stats.ok;
      peers.forEach((p, j) => {
        perAgent.push(p.requests - before[j]!);
        peerRequests += p.requests - before[j]!;
      });
      process.stderr.write(`checks: model hour ${r + 1}/${CHECK_ROUNDS}\n`);
    }
  } finally {
    await Promise.all(peers.map((p) => p.close()));
  }
  return {
    intervalS: CHECK_INTERVAL_S,
    jitter: CHECK_JITTER,
    meanPerAgentPerHour: 3600 / CHECK_INTERVAL_S,
    minPerAgentPerHour: 1 + Math.floor((3600 - CHECK_INTERVAL_S) / (CHECK_INTERVAL_S * (1 + CHECK_JITTER))),
    maxPerAgentPerHour: 1 + Math.floor(3600 / (CHECK_INTERVAL_S * (1 - CHECK_JITTER))),
    measured: { agents: CHECK_AGENTS, rounds: CHECK_ROUNDS, perAgentPerHour: perAgent, summary: summarize(perAgent), sent, ok, peerRequests },
  };
}

// ---- 5. fetch ---------------------------------------------------------------------------------

const FETCH_CALLS = envCount('BENCH_FETCH_CALLS', 500, 1_000_000);
type FetchSide = 'raw request()' | 'undici fetch' | 'policy fetch';
const FETCH_SIDES: readonly FetchSide[] = ['raw request()', 'undici fetch', 'policy fetch'];

async function fetchPart(): Promise<{ calls: number; rounds: number; cpuUsPerCall: Record<FetchSide, number[]> }> {
  const { child, peers } = await startPeers();
  const peer = peers[0]!;
  const rpcUrl = String((peer.card['supportedInterfaces'] as Array<{ url: string }>)[0]!.url);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'no-such-task' } });
  const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' };
  const policyFetch = createPolicyFetch({ policy: HostPolicy.from({ allow: [peer.baseUrl], allowLoopback: true }) });
  const agent = new Agent();
  const calls: Record<FetchSide, () => Promise<unknown>> = {
    'raw request()': async () => (await request(rpcUrl, { method: 'POST', headers, body, dispatcher: agent })).body.json(),
    'undici fetch': async () => (await undiciFetch(rpcUrl, { method: 'POST', headers, body, dispatcher: agent })).json(),
    'policy fetch': async () => (await policyFetch(rpcUrl, { method: 'POST', headers, body })).json(),
  };
  const cpu: Record<FetchSide, number[]> = { 'raw request()': [], 'undici fetch': [], 'policy fetch': [] };
  try {
    for (const side of FETCH_SIDES) for (let i = 0; i < 200; i++) await calls[side]();
    for (let r = 0; r < ROUNDS; r++) {
      const order = FETCH_SIDES.map((_, i) => FETCH_SIDES[(i + r) % FETCH_SIDES.length]!);
      for (const side of order) {
        const c0 = process.cpuUsage();
        for (let i = 0; i < FETCH_CALLS; i++) await calls[side]();
        const c = process.cpuUsage(c0);
        cpu[side].push((c.user + c.system) / FETCH_CALLS);
      }
    }
  } finally {
    await policyFetch.close();
    await agent.close();
    child.send({ type: 'close' });
  }
  return { calls: FETCH_CALLS, rounds: ROUNDS, cpuUsPerCall: cpu };
}

// ---- driver -----------------------------------------------------------------------------------

function inChild<T>(node: readonly string[], ...args: string[]): T {
  const out = execFileSync(process.execPath, [...node, '--import', 'tsx', SELF, '--child', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
  return JSON.parse(out.trim().split('\n').at(-1) ?? '') as T;
}

async function main(): Promise<void> {
  const started = new Date();
  const loadBefore = os.loadavg();
  const at = process.argv.indexOf('--part');
  const only = at >= 0 ? process.argv[at + 1] : undefined;
  const want = (p: string): boolean => only === undefined || only === p;
  const results: Record<string, unknown> = {};

  if (want('turns')) {
    const t = await turnsPart();
    results['turns'] = t;
    const row = (s: Setting): string[] => {
      const c = summarize(t.cpu[s]);
      const w = summarize(t.wall[s]);
      return [
        s,
        fmt(c.median * 1000, 0),
        `${fmt(c.min * 1000, 0)}–${fmt(c.max * 1000, 0)}`,
        s === 'none' ? '1 (baseline)' : fmtSummary(t.cpuRatio[s], 4),
        fmt(w.median * 1000, 0),
        s === 'none' ? '1 (baseline)' : fmtSummary(t.wallRatio[s], 4),
      ];
    };
    console.log(`\nChat turns through a routed root to two 1.x peers (peers in a child process), ${t.rounds} rounds × ${t.turnsPerRound} turns per setting`);
    console.log(table(['setting', 'own CPU µs/turn', 'round means', 'CPU ÷ none (per round)', 'wall µs/turn', 'wall ÷ none'], SETTINGS.map(row)));
    console.log(`peer calls per turn: ${fmt(t.peerCallsPerTurn, 3)}; calls counted (service setting): ${JSON.stringify(t.counted)}; rollout candidate turns: ${t.rolloutTurns}`);
    const share = (s: Setting): number[] => t.accounting[s].map((a, i) => a / t.cpu.none[i]!);
    for (const s of ['record', 'service'] as const) {
      console.log(`${s}: inside CallHealth.record/score ${fmtSummary(summarize(t.accounting[s].map((a) => a * 1000)), 1)} µs per turn = ${fmtSummary(summarize(share(s).map((x) => x * 100)), 2)} % of none's own CPU per turn (same round)`);
    }
    const worst = t.cpuRatio.service.median - 1;
    console.log(`service ÷ none − 1 (whole turns, median of rounds): ${fmt(worst * 100, 2)} % of the orchestrator's own CPU per turn — target ≤ ${TURN_OVERHEAD_LIMIT * 100} %: ${worst <= TURN_OVERHEAD_LIMIT ? 'met' : 'NOT MET'}`);
  }
  if (want('fetch')) {
    const f = await fetchPart();
    const base = f.cpuUsPerCall['raw request()'];
    const rows = FETCH_SIDES.map((side) => {
      const v = f.cpuUsPerCall[side];
      return [side, fmtSummary(summarize(v), 0), side === 'raw request()' ? '1 (baseline)' : fmtSummary(summarize(v.map((x, i) => x / base[i]!)), 2)];
    });
    results['fetch'] = { ...f, summary: Object.fromEntries(rows.map((r) => [r[0], { cpuUsPerCall: r[1], toRawRequest: r[2] }])) };
    console.log(`\nOne A2A call (JSON-RPC GetTask to a 1.x peer in a child process), client CPU µs per call, ${f.rounds} rounds × ${f.calls} calls (median [min–max]); ratio to raw request() of the same round`);
    console.log(table(['client', 'CPU µs/call', '÷ raw request()'], rows));
  }
  if (want('micro')) {
    const ns = inChild<Record<string, number[]>>([], 'micro');
    const base = ns['awaited Map.get']!;
    const rows = Object.entries(ns).map(([name, v]) => [name, fmtSummary(summarize(v), 1), fmtSummary(summarize(v.map((x, i) => x / base[i]!)), 2)]);
    results['micro'] = { rounds: MICRO_ROUNDS, nsPerCall: ns, summary: Object.fromEntries(rows.map((r) => [r[0], { ns: r[1], toAwaitedMapGet: r[2] }])) };
    console.log(`\nns per call, ${MICRO_ROUNDS} rounds (median [min–max]); ratio to the awaited Map.get of the same round`);
    console.log(table(['case', 'ns/call', '÷ awaited Map.get'], rows));
  }
  if (want('memory')) {
    const m = memoryPart();
    results['memory'] = { agents: MEMORY_AGENTS, rounds: MEMORY_ROUNDS, heapBytesPerAgent: m };
    console.log(`\nCallHealth heap per agent, ${MEMORY_AGENTS.toLocaleString('en-US')} agents, ${MEMORY_ROUNDS} rounds (fresh --expose-gc child each)`);
    console.log(table(['turn calls per agent', 'heap bytes per agent', 'MB for all agents (median)'], MEMORY_CALLS.map((n) => [String(n), fmtSummary(m[n]!, 0), fmt((m[n]!.median * MEMORY_AGENTS) / 1e6, 1)])));
  }
  if (want('checks')) {
    const c = await checksPart();
    results['checks'] = c;
    const m = c.measured;
    console.log(`\nActive check, interval ${c.intervalS} s ±${c.jitter * 100} %: by arithmetic ${c.meanPerAgentPerHour} requests per agent per hour on average, ${c.minPerAgentPerHour}–${c.maxPerAgentPerHour} in an agent's first hour`);
    console.log(`measured (virtual clock, one model hour, ${m.agents} agents × ${m.rounds} rounds): ${fmtSummary(m.summary, 0)} requests per agent per hour at the peers; sent ${m.sent}, TaskNotFound (ok) ${m.ok}, received at the peers ${m.peerRequests}`);
  }
  const path = writeResults('calls.json', { meta: machineMeta(started, loadBefore), ...results });
  console.log(`\nwritten: ${path}`);
}

const childAt = process.argv.indexOf('--child');
if (childAt >= 0) {
  const what = process.argv[childAt + 1];
  if (what === 'peers') await peersChild();
  else if (what === 'micro') console.log(JSON.stringify(await microChild()));
  else if (what === 'memory') console.log(JSON.stringify(memoryChild(Number(process.argv[childAt + 2] ?? 1))));
  else throw new Error(`unknown child ${what}`);
} else {
  await main();
}
